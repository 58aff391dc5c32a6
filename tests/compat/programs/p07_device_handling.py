# Device-agnostic code: pick cuda when available, else cpu, and move modules and tensors there.
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
print(f"Using {device} device; {torch.cuda.device_count()} GPUs")
device = torch.device(device)
model = nn.Linear(3, 2).to(device)
x = torch.ones(4, 3, device=device)
with torch.no_grad():
    model.weight.fill_(0.5)
    model.bias.zero_()
print(model(x).sum().item(), x.device.type, next(model.parameters()).device.type)
print(torch.backends.mps.is_available() if hasattr(torch.backends, "mps") else False)
if not torch.cuda.is_available():
    try:
        torch.ones(2).cuda()
    except (RuntimeError, AssertionError) as error:
        print("cuda refused:", type(error).__name__)
