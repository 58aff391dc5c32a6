# Module hooks, LazyLinear, set_default_device, non-leaf .grad and the LBFGS optimizer.
import warnings

import torch
import torch.nn as nn

seen = []
layer = nn.Linear(2, 2)
with torch.no_grad():
    layer.weight.copy_(torch.tensor([[1.0, -1.0], [0.5, 2.0]]))
    layer.bias.copy_(torch.tensor([0.1, -0.1]))
handle = layer.register_forward_hook(
    lambda module, inputs, output: seen.append(output.sum().item())
)
pre = layer.register_forward_pre_hook(lambda module, inputs: seen.append(inputs[0].shape[0]))
back = layer.register_full_backward_hook(
    lambda module, grad_in, grad_out: seen.append(grad_out[0].sum().item())
)
out = layer(torch.ones(3, 2, requires_grad=True))
out.sum().backward()
handle.remove()
pre.remove()
back.remove()
layer(torch.ones(1, 2))
print(seen)
lazy = nn.LazyLinear(4)
y = lazy(torch.ones(5, 3))
print(y.shape, lazy.weight.shape, lazy.in_features)
torch.set_default_device("cpu")
print(torch.ones(2).device)
a = torch.ones(2, requires_grad=True)
b = a * 2
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    _ = b.grad
print(len(caught) > 0)
x = torch.tensor([1.5, -0.5], requires_grad=True)
optimizer = torch.optim.LBFGS([x], lr=1, max_iter=20)


def closure():
    optimizer.zero_grad()
    loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
    loss.backward()
    return loss


for _ in range(3):
    optimizer.step(closure)
print([round(v, 4) for v in x.tolist()])
