# nn.init's deterministic initialisers, fans and gains; vector and matrix norms.
import math

import torch
import torch.nn as nn

w = torch.empty(3, 5)
nn.init.constant_(w, 0.3)
print(w.sum().item())
nn.init.ones_(w)
nn.init.zeros_(w[0])
print(w.sum().item())
nn.init.eye_(w)
print(w)
d = torch.empty(2, 4, 3)
nn.init.dirac_(torch.empty(4, 2, 3))
print(
    nn.init.calculate_gain("relu"),
    nn.init.calculate_gain("tanh"),
    nn.init.calculate_gain("leaky_relu", 0.2),
)
for fn in (
    nn.init.xavier_uniform_,
    nn.init.xavier_normal_,
    nn.init.kaiming_uniform_,
    nn.init.kaiming_normal_,
    nn.init.uniform_,
    nn.init.normal_,
    nn.init.trunc_normal_,
    nn.init.orthogonal_,
):
    t = torch.empty(64, 32)
    fn(t)
    print(fn.__name__, t.shape, bool(torch.isfinite(t).all()))
bound = 1 / math.sqrt(32)
layer = nn.Linear(32, 8)
print(bool((layer.weight.abs() <= bound).all()), bool((layer.bias.abs() <= bound).all()))
x = torch.tensor([[3.0, -4.0], [1.0, 2.0]])
print(x.norm().item(), x.norm(p=1).item(), x.norm(dim=1), torch.norm(x, p="fro").item())
print(
    torch.linalg.norm(x).item(),
    torch.linalg.norm(x, ord=2, dim=1),
    torch.linalg.vector_norm(x, ord=float("inf")).item(),
)
print(torch.linalg.matrix_norm(x).item(), torch.linalg.norm(x, ord="nuc").item() > 0)
