"""NumPy kernels. Each takes whylab Tensors (and Python values) and returns new Tensors."""
