"""Numerical kernels written to be read and checked against NumPy/SciPy (FFT, ...)."""
