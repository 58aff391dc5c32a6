# Tensor basics, in the spirit of the "Tensors" tutorial: creation, attributes, ops, bridges.
import numpy as np
import torch

data = [[1, 2], [3, 4]]
x_data = torch.tensor(data)
print(x_data.shape, x_data.dtype)
x_np = torch.from_numpy(np.array(data))
print(x_np.sum().item())
x_ones = torch.ones_like(x_data)
x_rand = torch.rand_like(x_data, dtype=torch.float)
print(x_ones, x_rand.shape)
shape = (2, 3)
print(torch.zeros(shape), torch.ones(shape).sum())
tensor = torch.ones(4, 4)
print(f"Shape: {tensor.shape}, dtype: {tensor.dtype}, device: {tensor.device}")
tensor[:, 1] = 0
print(tensor)
t1 = torch.cat([tensor, tensor, tensor], dim=1)
print(t1.shape)
y1 = tensor @ tensor.T
y2 = tensor.matmul(tensor.T)
y3 = torch.rand_like(y1)
torch.matmul(tensor, tensor.T, out=y3)
print(y1, (y1 == y2).all().item(), (y3 == y1).all().item())
z1 = tensor * tensor
agg = tensor.sum()
print(z1, agg.item(), type(agg.item()).__name__)
tensor.add_(5)
print(tensor)
n = tensor.numpy()
tensor.add_(1)
print(n)
print(torch.arange(6).reshape(2, 3).float().mean(dim=1))
print(torch.arange(10).view(2, 5)[1, 2:4], torch.eye(3)[1])
