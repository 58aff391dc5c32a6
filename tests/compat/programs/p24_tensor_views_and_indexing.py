# Views, strides and indexing the way tutorials poke at them.
import torch

t = torch.arange(12).view(3, 4)
print(t.stride(), t.t().stride(), t.t().is_contiguous(), t.t().contiguous().stride())
print(t[:, 1], t[1:, ::2], t[t > 5], t[[0, 2]], t[torch.tensor([1, 0]), torch.tensor([3, 2])])
print(t.unsqueeze(0).shape, t.flatten().shape, t.permute(1, 0).shape, t.reshape(-1, 6).shape)
print(t.transpose(0, 1).reshape(2, 6), torch.stack([t, t]).shape, torch.cat([t, t], dim=1).shape)
print(t.chunk(2, dim=1)[0], t.split(1, dim=0)[2], t.narrow(1, 1, 2))
u = t.clone().float()
u[u > 8] = -1.0
u.masked_fill_(u < 2, 0.5)
print(u, u.max(), u.max(dim=1).values, u.argmax(dim=1), u.topk(2, dim=1).values)
print(torch.where(t > 6, t, torch.zeros_like(t)), t.sort(descending=True, dim=1).values[:, 0])
print(t.float().std().item(), t.float().var(dim=0), t.sum(dim=(0, 1)), t.prod(dim=0))
print(t.expand(2, 3, 4).shape, t.repeat(2, 1).shape, t.flip(0)[0], t.roll(1, dims=1)[0])
