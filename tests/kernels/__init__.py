"""Engine tests: kernels."""
