# A small CNN on 8x8 images: Conv2d, max_pool2d, avg_pool2d, flatten, a linear head.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

rng = np.random.default_rng(3)
images = torch.tensor(rng.standard_normal((6, 1, 8, 8)), dtype=torch.float32)
labels = torch.tensor(rng.integers(0, 3, size=6))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 6, 3, stride=1)
        self.fc = nn.Linear(6 * 1 * 1, 3)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.avg_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc(x)


net = Net()
with torch.no_grad():
    for p in net.parameters():
        p.copy_(torch.tensor(rng.uniform(-0.3, 0.3, tuple(p.shape)), dtype=torch.float32))
print(net.conv1.weight.shape, net.conv2.bias.shape)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(5):
    optimizer.zero_grad()
    loss = F.cross_entropy(net(images), labels)
    loss.backward()
    optimizer.step()
    print(f"step {step} loss {loss.item():.6f}")
print(net.conv1.weight.grad.abs().sum().item() > 0)
