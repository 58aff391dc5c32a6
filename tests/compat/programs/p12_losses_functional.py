# The common losses, as modules and functions, with each reduction.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

rng = np.random.default_rng(5)
pred = torch.tensor(rng.standard_normal((4, 3)), dtype=torch.float64, requires_grad=True)
target = torch.tensor(rng.standard_normal((4, 3)), dtype=torch.float64)
prob = torch.sigmoid(torch.tensor(rng.standard_normal((4, 3)), dtype=torch.float64))
binary = torch.tensor(rng.integers(0, 2, (4, 3)), dtype=torch.float64)
for reduction in ("mean", "sum", "none"):
    values = [
        nn.MSELoss(reduction=reduction)(pred, target),
        nn.L1Loss(reduction=reduction)(pred, target),
        nn.SmoothL1Loss(reduction=reduction, beta=0.5)(pred, target),
        nn.HuberLoss(reduction=reduction, delta=0.7)(pred, target),
        nn.BCELoss(reduction=reduction)(torch.sigmoid(pred), binary),
        nn.BCEWithLogitsLoss(
            reduction=reduction, pos_weight=torch.tensor([1.0, 2.0, 0.5], dtype=torch.float64)
        )(pred, binary),
        F.binary_cross_entropy(prob, binary, reduction=reduction),
        F.smooth_l1_loss(pred, target, reduction=reduction),
    ]
    print(reduction, [v.sum().item() for v in values])
total = sum(
    loss.sum()
    for loss in (F.l1_loss(pred, target), F.mse_loss(pred, target), F.huber_loss(pred, target))
)
total.backward()
print(pred.grad)
logits = torch.tensor(rng.standard_normal((5, 4)), dtype=torch.float64)
classes = torch.tensor([0, 3, 1, 1, 2])
print(nn.NLLLoss()(F.log_softmax(logits, dim=1), classes).item())
print(nn.CrossEntropyLoss(label_smoothing=0.1)(logits, classes).item())
print(
    nn.KLDivLoss(reduction="batchmean")(
        F.log_softmax(logits, 1), F.softmax(logits.flip(0), 1)
    ).item()
)
