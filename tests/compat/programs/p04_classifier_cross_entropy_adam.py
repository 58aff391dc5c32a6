# A classifier with nn.CrossEntropyLoss and optim.Adam on made-up blobs (the blitz tutorial's loop).
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

rng = np.random.default_rng(1)
centers = np.array([[2.0, 0.0], [-2.0, 0.0], [0.0, 2.0]])
labels_np = rng.integers(0, 3, size=120)
points_np = centers[labels_np] + 0.6 * rng.standard_normal((120, 2))
points = torch.tensor(points_np, dtype=torch.float32)
labels = torch.tensor(labels_np)

model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 3))
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(rng.uniform(-0.4, 0.4, tuple(p.shape)), dtype=torch.float32))
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
for step in range(60):
    logits = model(points)
    loss = loss_fn(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 10 == 0:
        accuracy = (logits.argmax(dim=1) == labels).float().mean()
        print(f"step {step:2d} loss {loss.item():.5f} accuracy {accuracy.item():.4f}")
probabilities = F.softmax(model(points[:3]), dim=1)
print(probabilities.sum(dim=1))
print(model[0].weight.grad.shape)
