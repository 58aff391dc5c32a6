# Saving and loading: a state_dict, a plain tensor, and nested containers of tensors.
import os
import tempfile

import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.full(tuple(p.shape), 0.1 * (i + 1)))
folder = tempfile.mkdtemp()
path = os.path.join(folder, "model.pt")
torch.save(model.state_dict(), path)
restored = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1))
restored.load_state_dict(torch.load(path, weights_only=True))
x = torch.ones(1, 3)
print(model(x).item(), restored(x).item())
torch.save(torch.arange(5.0), os.path.join(folder, "t.pt"))
print(torch.load(os.path.join(folder, "t.pt")))
bundle = {"step": 3, "tensors": [torch.ones(2), torch.zeros(1)], "nested": {"w": torch.eye(2)}}
torch.save(bundle, os.path.join(folder, "bundle.pt"))
back = torch.load(os.path.join(folder, "bundle.pt"))
print(back["step"], back["tensors"][0], back["nested"]["w"])
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
model(x).sum().backward()
optimizer.step()
torch.save({"model": model.state_dict(), "optim": optimizer.state_dict()}, path)
checkpoint = torch.load(path)
optimizer.load_state_dict(checkpoint["optim"])
print(sorted(checkpoint["optim"]["state"][0].keys()), checkpoint["optim"]["param_groups"][0]["lr"])
