# A d2l-style CNN of lazy layers (LazyConv2d, LazyBatchNorm2d, LazyLinear), initialised by
# an init function that tests type(m) == nn.Linear / nn.Conv2d after the first forward (the
# lazy layers must have become those classes), trained a few SGD steps; losses printed with
# format specs on 0-d tensors. Written for this project after d2l's LeNet/AlexNet chapters
# (d2l-ai/d2l-en, chapter_convolutional-modern), which use the same layer and init pattern.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

rng = np.random.default_rng(25)
net = nn.Sequential(
    nn.LazyConv2d(4, kernel_size=3, padding=1), nn.LazyBatchNorm2d(), nn.ReLU(),
    nn.MaxPool2d(kernel_size=2, stride=2), nn.Flatten(),
    nn.LazyLinear(8), nn.ReLU(), nn.LazyLinear(3),
)
x = torch.tensor(rng.standard_normal((6, 2, 6, 6)), dtype=torch.float32)
y = torch.tensor(rng.integers(0, 3, size=6))
net.eval()  # so that the first call leaves the batch-norm statistics as they are
net(x)  # the first call gives every lazy layer its input size
net.train()
print([type(m).__name__ for m in net])


def init_weights(m):
    if type(m) == nn.Linear or type(m) == nn.Conv2d:  # noqa: E721 - d2l's idiom, under test
        with torch.no_grad():
            m.weight.copy_(torch.tensor(rng.standard_normal(tuple(m.weight.shape)) * 0.3))
            m.bias.fill_(0.01)


net.apply(init_weights)
print(sum(p.numel() for p in net.parameters()))
optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, foreach=False)
for step in range(5):
    optimizer.zero_grad()
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss {loss:.5f}, {loss.item():+.4e}")
net.eval()
with torch.no_grad():
    logits = net(x)
print(logits.softmax(axis=1).sum(axis=1))
print(logits.argmax(dim=1).tolist(), f"{(logits.argmax(1) == y).float().mean():.3f}")
print(net[1].running_mean.round(decimals=4))
