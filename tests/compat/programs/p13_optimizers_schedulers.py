# Optimizers and learning-rate schedules on one quadratic bowl.
import torch


def run(make_optimizer, make_scheduler=None, steps=12):
    x = torch.tensor([1.5, -2.0, 0.5], requires_grad=True)
    optimizer = make_optimizer([x])
    scheduler = make_scheduler(optimizer) if make_scheduler else None
    for _ in range(steps):
        optimizer.zero_grad()
        loss = (x * x * torch.tensor([1.0, 3.0, 10.0])).sum()
        loss.backward()
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
    lr = optimizer.param_groups[0]["lr"]
    return [round(v, 6) for v in x.tolist()], round(lr, 8)


print(run(lambda p: torch.optim.SGD(p, lr=0.05)))
print(run(lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True)))
print(run(lambda p: torch.optim.Adam(p, lr=0.1)))
print(run(lambda p: torch.optim.AdamW(p, lr=0.1, weight_decay=0.1)))
print(run(lambda p: torch.optim.RMSprop(p, lr=0.01)))
print(run(lambda p: torch.optim.RMSprop(p, lr=0.01, momentum=0.5, centered=True)))
print(run(lambda p: torch.optim.Adagrad(p, lr=0.5)))
print(
    run(
        lambda p: torch.optim.SGD(p, lr=0.05),
        lambda o: torch.optim.lr_scheduler.StepLR(o, step_size=4, gamma=0.5),
    )
)
print(
    run(
        lambda p: torch.optim.SGD(p, lr=0.05),
        lambda o: torch.optim.lr_scheduler.ExponentialLR(o, gamma=0.9),
    )
)
print(
    run(
        lambda p: torch.optim.SGD(p, lr=0.05),
        lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=10),
    )
)
print(
    run(
        lambda p: torch.optim.SGD(p, lr=0.05),
        lambda o: torch.optim.lr_scheduler.MultiStepLR(o, milestones=[3, 8], gamma=0.1),
    )
)
print(
    run(
        lambda p: torch.optim.SGD(p, lr=0.05),
        lambda o: torch.optim.lr_scheduler.LambdaLR(o, lambda e: 1.0 / (1 + e)),
    )
)
