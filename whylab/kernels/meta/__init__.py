"""Meta kernels: compute the sizes, strides and dtype of a result without any data."""
