# Softmax regression from scratch (d2l): the softmax by hand, cross-entropy by indexing, accuracy.
import numpy as np
import torch

rng = np.random.default_rng(9)
num_inputs, num_outputs = 6, 3
X = torch.tensor(rng.standard_normal((30, num_inputs)), dtype=torch.float32)
y = torch.tensor(rng.integers(0, num_outputs, size=30))
W = torch.tensor(
    rng.normal(0, 0.01, (num_inputs, num_outputs)), dtype=torch.float32, requires_grad=True
)
b = torch.zeros(num_outputs, requires_grad=True)


def softmax(X):
    X_exp = torch.exp(X)
    partition = X_exp.sum(1, keepdim=True)
    return X_exp / partition


def net(X):
    return softmax(torch.matmul(X.reshape((-1, W.shape[0])), W) + b)


def cross_entropy(y_hat, y):
    return -torch.log(y_hat[range(len(y_hat)), y])


def accuracy(y_hat, y):
    y_hat = y_hat.argmax(axis=1)
    cmp = y_hat.type(y.dtype) == y
    return float(cmp.type(y.dtype).sum())


for epoch in range(5):
    l = cross_entropy(net(X), y)
    l.mean().backward()
    with torch.no_grad():
        for param in (W, b):
            param -= 0.5 * param.grad
            param.grad.zero_()
    print(f"epoch {epoch} loss {l.mean().item():.6f} accuracy {accuracy(net(X), y) / len(y):.4f}")
print(softmax(torch.tensor([[1.0, 2.0], [0.0, 0.0]])))
