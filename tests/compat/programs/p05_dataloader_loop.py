# Training through torch.utils.data: TensorDataset, DataLoader batches, random_split sizes.
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, TensorDataset, random_split

rng = np.random.default_rng(2)
features = torch.tensor(rng.standard_normal((50, 4)), dtype=torch.float32)
targets = (features.sum(dim=1, keepdim=True) > 0).float()
dataset = TensorDataset(features, targets)
print(len(dataset), dataset[3][0].shape, dataset[3][1])
loader = DataLoader(dataset, batch_size=16, shuffle=False)
print([batch[0].shape[0] for batch in loader])
print(len(DataLoader(dataset, batch_size=16, drop_last=True)))


class Squares(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, index):
        return {"x": torch.tensor([float(index)]), "y": torch.tensor(index * index)}


for batch in DataLoader(Squares(), batch_size=4):
    print(batch["x"].shape, batch["y"])

train, valid = random_split(dataset, [40, 10], generator=torch.Generator().manual_seed(0))
print(len(train), len(valid))
model = nn.Linear(4, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.1, -0.1, 0.2, 0.0]]))
    model.bias.fill_(0.0)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
loss_fn = nn.BCEWithLogitsLoss()
for epoch in range(3):
    total = 0.0
    for x, y in loader:
        loss = loss_fn(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item() * x.shape[0]
    print(f"epoch {epoch} mean loss {total / len(dataset):.6f}")
