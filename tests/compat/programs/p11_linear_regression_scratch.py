# Linear regression from scratch (d2l's chapter): minibatches, manual SGD under no_grad.
import numpy as np
import torch

rng = np.random.default_rng(4)
true_w = torch.tensor([2.0, -3.4])
true_b = 4.2
X = torch.tensor(rng.normal(0, 1, (100, 2)), dtype=torch.float32)
y = torch.matmul(X, true_w) + true_b + torch.tensor(rng.normal(0, 0.01, 100), dtype=torch.float32)
y = y.reshape((-1, 1))
w = torch.tensor(rng.normal(0, 0.01, (2, 1)), dtype=torch.float32, requires_grad=True)
b = torch.zeros(1, requires_grad=True)


def linreg(X, w, b):
    return torch.matmul(X, w) + b


def squared_loss(y_hat, y):
    return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2


def sgd(params, lr, batch_size):
    with torch.no_grad():
        for param in params:
            param -= lr * param.grad / batch_size
            param.grad.zero_()


for epoch in range(3):
    for start in range(0, 100, 10):
        X_batch, y_batch = X[start : start + 10], y[start : start + 10]
        l = squared_loss(linreg(X_batch, w, b), y_batch)
        l.sum().backward()
        sgd([w, b], 0.03, 10)
    with torch.no_grad():
        train_l = squared_loss(linreg(X, w, b), y)
        print(f"epoch {epoch + 1}, loss {float(train_l.mean()):f}")
print(f"error in w: {(true_w - w.reshape(true_w.shape)).abs().max().item():.4f}")
print(f"error in b: {abs(true_b - b.item()):.4f}")
