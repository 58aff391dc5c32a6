# Odds and ends tutorials use: more dtypes, log10/log2, cumsum, index_add_, out=, axis= aliases,
# Tensor(...) and FloatTensor/LongTensor, .type(), in-place unary forms, sampling functions.
import torch

x = torch.tensor([1.0, 10.0, 100.0])
print(
    torch.log10(x),
    torch.log2(torch.tensor([8.0, 0.5])),
    x.cumsum(0),
    torch.cumsum(torch.arange(5), dim=0),
)
for dt in (torch.int8, torch.int16, torch.uint8, torch.float16, torch.bfloat16):
    t = torch.tensor([1, 2, 3], dtype=dt)
    print(dt, t.sum().item(), t.dtype.is_floating_point, t.element_size())
acc = torch.zeros(3)
acc.index_add_(0, torch.tensor([0, 2, 0]), torch.tensor([1.0, 2.0, 3.0]))
print(acc)
out = torch.empty(3)
torch.add(x, 1, out=out)
print(out, torch.zeros(2, 2, out=torch.empty(2, 2)).sum().item())
print(
    x.sum(axis=0, keepdims=True),
    torch.Tensor([1, 2]),
    torch.FloatTensor([1.5]).dtype,
    torch.LongTensor([3]).dtype,
)
print(x.type(torch.int64), x.type(), torch.tensor([1]).type())
y = torch.tensor([0.0, 1.0])
y.sin_().exp_()
z = torch.ones(3)
z.unsqueeze_(0)
print(y, z.shape)
print(
    torch.randn(size=(2, 3)).shape,
    torch.normal(0.0, 1.0, size=(4,)).shape,
    torch.normal(torch.zeros(3), 1.0).shape,
)
print(
    torch.bernoulli(torch.full((5,), 0.5)).shape,
    torch.empty(3).normal_().shape,
    torch.empty(3).uniform_(-1, 1).abs().max().item() <= 1,
)
print(
    torch.empty(4).bernoulli_(0.5).shape,
    torch.rand(size=(2,)).shape,
    torch.zeros(size=(2, 1)).shape,
)
print(x.shape, x._version, torch.Size([2, 3]).numel())
