# A sequence model: nn.LSTM, nn.GRU and nn.LSTMCell on made-up sequences, with weights set by hand.
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(6)


def fill(module):
    with torch.no_grad():
        for name, p in module.named_parameters():
            p.copy_(torch.tensor(rng.uniform(-0.3, 0.3, tuple(p.shape)), dtype=torch.float32))


sequence = torch.tensor(
    rng.standard_normal((5, 2, 3)), dtype=torch.float32
)  # (time, batch, features)
lstm = nn.LSTM(input_size=3, hidden_size=4, num_layers=2)
fill(lstm)
output, (h, c) = lstm(sequence)
print(output.shape, h.shape, c.shape)
print(output[-1].sum().item(), h.sum().item(), c.sum().item())
gru = nn.GRU(3, 4, batch_first=True)
fill(gru)
out_g, h_g = gru(sequence.transpose(0, 1))
print(out_g.shape, h_g.shape, out_g.sum().item())
cell = nn.LSTMCell(3, 4)
fill(cell)
hx = torch.zeros(2, 4)
cx = torch.zeros(2, 4)
for step in range(sequence.shape[0]):
    hx, cx = cell(sequence[step], (hx, cx))
print(hx.sum().item(), cx.sum().item())
loss = output.pow(2).mean() + out_g.pow(2).mean() + hx.pow(2).mean()
loss.backward()
print(lstm.weight_ih_l0.grad.abs().sum().item(), gru.weight_hh_l0.grad.abs().sum().item())
print([name for name, _ in lstm.named_parameters()][:4])
