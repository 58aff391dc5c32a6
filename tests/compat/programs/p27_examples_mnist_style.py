# The shape of pytorch/examples' mnist/main.py, on small synthetic digits: the
# torch.accelerator device choice, Dropout in train mode replaced by eval-mode evaluation,
# F.log_softmax + F.nll_loss, Adadelta with StepLR, clip_grad_norm_, the argmax/eq/sum
# accuracy idiom, and torch.save of both the state_dict and the whole model (loaded back
# with weights_only=False). Written for this project; the structure follows
# pytorch/examples mnist/main.py (BSD-3-Clause), none of its code is copied.
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import StepLR


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 12)
        self.dropout = nn.Dropout(0.25)
        self.fc2 = nn.Linear(12, 4)

    def forward(self, x):
        x = torch.flatten(x, 1)
        x = self.dropout(F.relu(self.fc1(x)))
        return F.log_softmax(self.fc2(x), dim=1)


device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
print(device)
rng = np.random.default_rng(27)
data = torch.tensor(rng.standard_normal((32, 1, 4, 4)), dtype=torch.float32).to(device)
target = torch.tensor(rng.integers(0, 4, size=32)).to(device)
model = Net().to(device)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)) * 0.4))
optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
for epoch in range(1, 4):
    model.eval()  # dropout off, so both libraries see the same network
    optimizer.zero_grad()
    loss = F.nll_loss(model(data), target)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    optimizer.step()
    scheduler.step()
    print("Train Epoch: {} Loss: {:.6f} grad norm {:.4f} lr {:.4f}".format(  # noqa: UP032
        epoch, loss.item(), norm, scheduler.get_last_lr()[0]))
model.eval()
with torch.no_grad():
    output = model(data)
    test_loss = F.nll_loss(output, target, reduction="sum").item() / len(data)
    pred = output.argmax(dim=1, keepdim=True)
    correct = pred.eq(target.view_as(pred)).sum().item()
print(f"Test set: Average loss: {test_loss:.4f}, Accuracy: {correct}/{len(data)}")
with tempfile.TemporaryDirectory() as folder:
    torch.save(model.state_dict(), os.path.join(folder, "mnist_cnn.pt"))
    fresh = Net()
    fresh.load_state_dict(torch.load(os.path.join(folder, "mnist_cnn.pt")))
    fresh.eval()
    torch.save(model, os.path.join(folder, "whole.pt"))
    try:
        torch.load(os.path.join(folder, "whole.pt"))
    except Exception as error:
        print(type(error).__name__, "weights_only" in str(error))
    whole = torch.load(os.path.join(folder, "whole.pt"), weights_only=False)
    whole.eval()
    print(type(whole).__name__, torch.equal(fresh(data), output), torch.equal(whole(data), output))
