"""whylab: a NumPy-backed tensor library and autograd engine built the way PyTorch is built."""

__version__ = "0.1.0"
