"""Topic "What happens when you call a @ b?": the dispatcher and torch.matmul's rules."""
