"""The math font: the whole Noto Sans Math, and the subset of it the explorer serves."""
