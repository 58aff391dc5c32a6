"""Utilities built on the tensor library (activation checkpointing)."""
