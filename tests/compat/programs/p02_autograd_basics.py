# Autograd basics: requires_grad, backward, gradients, no_grad, detach (the autograd tutorial).
import numpy as np
import torch

x = torch.ones(5)
y = torch.zeros(3)
w = torch.tensor(np.linspace(-1, 1, 15).reshape(5, 3), dtype=torch.float32, requires_grad=True)
b = torch.tensor([0.1, -0.2, 0.3], requires_grad=True)
z = torch.matmul(x, w) + b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
print("Gradient function for z =", type(z.grad_fn).__name__)
loss.backward()
print(w.grad)
print(b.grad)
with torch.no_grad():
    z = torch.matmul(x, w) + b
print(z.requires_grad)
z_det = (torch.matmul(x, w) + b).detach()
print(z_det.requires_grad)
inp = torch.eye(4, 5, requires_grad=True)
out = (inp + 1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"First call\n{inp.grad}")
out.backward(torch.ones_like(out), retain_graph=True)
print(f"Second call\n{inp.grad}")
inp.grad.zero_()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"Call after zeroing gradients\n{inp.grad}")
a = torch.tensor([2.0, 3.0], requires_grad=True)
q = 3 * a**3 - a**2
q.backward(gradient=torch.tensor([1.0, 1.0]))
print(a.grad, 9 * a**2 - 2 * a)
