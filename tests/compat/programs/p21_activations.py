# Activation functions and their modules, forward and backward, in float64.
import torch
import torch.nn as nn
import torch.nn.functional as F

x = torch.linspace(-3, 3, 7, dtype=torch.float64, requires_grad=True)
modules = [
    nn.ReLU(),
    nn.Tanh(),
    nn.Sigmoid(),
    nn.GELU(),
    nn.GELU(approximate="tanh"),
    nn.SiLU(),
    nn.Softplus(beta=2.0),
    nn.LeakyReLU(0.1),
    nn.ELU(),
    nn.Hardtanh(),
    nn.Softsign(),
    nn.Mish(),
    nn.LogSigmoid(),
    nn.ReLU6(),
    nn.Hardsigmoid(),
    nn.Hardswish(),
    nn.PReLU(init=0.2).double(),
]
total = 0
for module in modules:
    y = module(x)
    total = total + y.sum()
    print(type(module).__name__, [round(v, 6) for v in y.tolist()])
total.backward()
print([round(v, 6) for v in x.grad.tolist()])
m = torch.tensor([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]], dtype=torch.float64)
print(
    nn.Softmax(dim=1)(m),
    nn.LogSoftmax(dim=-1)(m),
    F.softplus(m).sum().item(),
    F.gelu(m).sum().item(),
)
print(
    F.leaky_relu(-m, 0.2),
    F.elu(-m).sum().item(),
    F.silu(m).sum().item(),
    torch.sigmoid(m).sum().item(),
)
