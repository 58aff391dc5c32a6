# makemore's bigram model: counts in an int32 matrix, normalised rows, the negative log-likelihood.
import torch

words = ["emma", "olivia", "ava", "isabella", "sophia", "mia", "amelia", "ella"]
chars = sorted(set("".join(words)))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi["."] = 0
itos = {i: s for s, i in stoi.items()}
size = len(stoi)
N = torch.zeros((size, size), dtype=torch.int32)
for w in words:
    chs = ["."] + list(w) + ["."]
    for ch1, ch2 in zip(chs, chs[1:]):
        N[stoi[ch1], stoi[ch2]] += 1
P = (N + 1).float()
P /= P.sum(1, keepdims=True)
print(N.sum().item(), P[0].sum().item())
log_likelihood = 0.0
n = 0
for w in words:
    chs = ["."] + list(w) + ["."]
    for ch1, ch2 in zip(chs, chs[1:]):
        log_likelihood += torch.log(P[stoi[ch1], stoi[ch2]])
        n += 1
print(f"nll={(-log_likelihood / n).item():.6f}")
g = torch.Generator().manual_seed(2147483647)
ix = torch.multinomial(P[0], num_samples=5, replacement=True, generator=g)
print(ix.shape, ix.dtype, bool((ix >= 0).all()), bool((ix < size).all()))
xs = torch.tensor([0, 5, 11])
xenc = torch.nn.functional.one_hot(xs, num_classes=size).float()
print(xenc.shape, xenc.sum().item())
