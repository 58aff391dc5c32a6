# d2l's linear regression from scratch (torch.normal with factory keywords, hand-written SGD
# under no_grad), then the rounding family, clamp variants and NumPy-style axis= keywords on
# the result. Written for this project after d2l-ai/d2l-en chapter_linear-regression
# (linear-regression-scratch.md), which creates w with
# torch.normal(0, sigma, (num_inputs, 1), requires_grad=True).
import numpy as np
import torch

rng = np.random.default_rng(26)
features = torch.tensor(rng.standard_normal((40, 2)), dtype=torch.float32)
true_w, true_b = torch.tensor([2.0, -3.4]), 4.2
labels = features @ true_w + true_b + torch.tensor(rng.normal(0, 0.01, 40), dtype=torch.float32)

w = torch.normal(0, 0.01, size=(2, 1), requires_grad=True)
b = torch.zeros(1, requires_grad=True)
print(w.shape, w.requires_grad, w.is_leaf, w.dtype)
with torch.no_grad():  # the same start under both libraries (their random streams differ)
    w.copy_(torch.tensor(rng.normal(0, 0.01, (2, 1)), dtype=torch.float32))

for epoch in range(3):
    for start in range(0, 40, 10):
        X, y = features[start:start + 10], labels[start:start + 10]
        loss = ((X @ w + b - y.reshape(-1, 1)) ** 2 / 2).sum()
        loss.backward()
        with torch.no_grad():
            for param in (w, b):
                param -= 0.03 * param.grad / 10
                param.grad.zero_()
    with torch.no_grad():
        train_l = ((features @ w + b - labels.reshape(-1, 1)) ** 2 / 2).mean()
    print(f"epoch {epoch + 1}, loss {train_l:f}")
print(f"error in w: {(true_w - w.reshape(true_w.shape)).abs().max():.4f}")

v = torch.tensor([-2.5, -1.55, -0.5, 0.25, 0.5, 1.5, 2.5, 14.96])
print(v.ceil(), torch.floor(v), v.trunc(), torch.fix(v), v.frac())
print(v.round(), torch.round(v, decimals=1), v.round(decimals=-1), v.sign())
print(v.clamp_min(0.0), torch.clamp_max(v, 1.0), v.clip(-1, 1))
u = v.clone()
u.floor_()
u.clamp_(min=-1)
print(u, v.cumsum(axis=0), v.reshape(2, 4).sum(axis=1, keepdims=True))
t = torch.tensor([0.3, 1.7], requires_grad=True)
s = t * 1
s.tanh_()
s.round_(decimals=2)
print(type(s.grad_fn).__name__, s)
(t.exp().frac() + t.clamp_min(1.0)).sum().backward()
print(t.grad)
