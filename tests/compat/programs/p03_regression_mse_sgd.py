# A small regression network trained with nn.MSELoss and optim.SGD (the nn tutorial's shape).
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

rng = np.random.default_rng(0)
inputs = torch.tensor(rng.standard_normal((64, 3)), dtype=torch.float32)
true_w = torch.tensor([[1.5], [-2.0], [0.5]])
targets = inputs @ true_w + 0.3


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(3, 8)
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        return self.out(torch.relu(self.hidden(x)))


net = Net()
with torch.no_grad():
    for p in net.parameters():
        p.copy_(torch.tensor(rng.uniform(-0.5, 0.5, tuple(p.shape)), dtype=torch.float32))
criterion = nn.MSELoss()
optimizer = optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
for epoch in range(30):
    optimizer.zero_grad()
    loss = criterion(net(inputs), targets)
    loss.backward()
    optimizer.step()
    if epoch % 5 == 0:
        print(f"epoch {epoch} loss {loss.item():.6f}")
print(net)
print(sum(p.numel() for p in net.parameters()))
