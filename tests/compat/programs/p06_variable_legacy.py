# Old tutorials wrap tensors in autograd.Variable; today it returns a plain Tensor.
import torch
from torch.autograd import Variable

x = Variable(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), requires_grad=True)
y = x * x + 2
out = y.mean()
out.backward()
print(x.grad, isinstance(x, torch.Tensor), out.data)
v = Variable(torch.ones(3))
print(v.requires_grad, v.sum())
