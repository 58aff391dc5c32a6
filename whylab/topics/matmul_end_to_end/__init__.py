"""Topic: torch.matmul from the call to the kernel, and back through autograd."""
