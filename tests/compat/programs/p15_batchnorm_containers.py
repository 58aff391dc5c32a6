# BatchNorm, ModuleList and ModuleDict, train/eval modes and running statistics.
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(7)


class Blocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        self.norm = nn.BatchNorm1d(4)
        self.heads = nn.ModuleDict({"a": nn.Linear(4, 1), "b": nn.Linear(4, 2)})

    def forward(self, x, head):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return self.heads[head](self.norm(x))


model = Blocks()
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(rng.uniform(-0.5, 0.5, tuple(p.shape)), dtype=torch.float32))
x = torch.tensor(rng.standard_normal((8, 4)), dtype=torch.float32)
print(len(model.layers), sorted(model.heads.keys()))
out = model(x, "b")
out.sum().backward()
print(out.shape, out.sum().item())
print(model.norm.running_mean, model.norm.running_var, model.norm.num_batches_tracked.item())
model.eval()
print(model(x, "a").sum().item(), model.training, model.norm.training)
bn2 = nn.BatchNorm2d(3)
images = torch.tensor(rng.standard_normal((2, 3, 4, 4)), dtype=torch.float32)
y = bn2(images)
print(y.mean(dim=(0, 2, 3)).abs().max().item() < 1e-5, bn2.running_mean)
print(len(list(model.named_parameters())), len(model.state_dict()))
