"""Topic: packed symmetric storage and the symmetric GAXPY (see experiments.py)."""
