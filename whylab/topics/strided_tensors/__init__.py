"""The strided-tensors topic: how views cost nothing, and when a copy is needed."""
