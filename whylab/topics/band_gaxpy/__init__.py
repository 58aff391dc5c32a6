"""Topic: band storage and the band GAXPY (see experiments.py)."""
