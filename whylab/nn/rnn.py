"""Recurrent layers with torch's gate equations, parameter names and shapes.

Cells (one time step): ``RNNCell``, ``LSTMCell``, ``GRUCell``. Layers (a whole
sequence, ``num_layers`` stacked, optionally bidirectional): ``RNN``, ``LSTM``,
``GRU``. The gates are torch's: LSTM stacks (input, forget, cell, output) in its
weights; GRU stacks (reset, update, new) and applies the reset gate to
``W_hn h + b_hn``. Every weight starts from U(-1/sqrt(hidden), 1/sqrt(hidden)).
The time loop is Python: each step is a few engine ops, so the graph holds one
node per op per step and backpropagation through time is the ordinary backward.
"""

from __future__ import annotations

import math

import whylab

from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


def _rnn_tanh_step(x, h, weights):
    w_ih, w_hh, b_ih, b_hh = weights
    return _affine(x, w_ih, b_ih).add(_affine(h, w_hh, b_hh)).tanh()


def _rnn_relu_step(x, h, weights):
    w_ih, w_hh, b_ih, b_hh = weights
    return _affine(x, w_ih, b_ih).add(_affine(h, w_hh, b_hh)).relu()


def _affine(x, weight, bias):
    return F.linear(x, weight, bias)


def _lstm_step(x, state, weights):
    h, c = state
    w_ih, w_hh, b_ih, b_hh = weights
    gates = _affine(x, w_ih, b_ih) + _affine(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c.tanh(), c


def _gru_step(x, h, weights):
    w_ih, w_hh, b_ih, b_hh = weights
    r_x, z_x, n_x = _affine(x, w_ih, b_ih).chunk(3, -1)
    r_h, z_h, n_h = _affine(h, w_hh, b_hh).chunk(3, -1)
    r = (r_x + r_h).sigmoid()
    z = (z_x + z_h).sigmoid()
    n = (n_x + r * n_h).tanh()
    return (1 - z) * n + z * h


_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}
_STEPS = {
    "RNN_TANH": _rnn_tanh_step,
    "RNN_RELU": _rnn_relu_step,
    "LSTM": _lstm_step,
    "GRU": _gru_step,
}


def _uniform_reset(module: Module, hidden_size: int) -> None:
    bound = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0
    for weight in module.parameters():
        init.uniform_(weight, -bound, bound)


class _CellBase(Module):
    mode = "RNN_TANH"

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None
    ):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        gates = _GATES[self.mode] * hidden_size
        self.weight_ih = Parameter(whylab.empty(gates, input_size, device=device, dtype=dtype))
        self.weight_hh = Parameter(whylab.empty(gates, hidden_size, device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(whylab.empty(gates, device=device, dtype=dtype))
            self.bias_hh = Parameter(whylab.empty(gates, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        _uniform_reset(self, hidden_size)

    def _weights(self):
        return (self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)

    def _zeros(self, input):
        shape = (input.shape[0], self.hidden_size) if input.ndim == 2 else (self.hidden_size,)
        return whylab.zeros(shape, dtype=input.dtype)

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")


class RNNCell(_CellBase):
    def __init__(
        self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None
    ):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
        super().__init__(input_size, hidden_size, bias, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        hx = self._zeros(input) if hx is None else hx
        return _STEPS[self.mode](input, hx, self._weights())


class LSTMCell(_CellBase):
    mode = "LSTM"

    def forward(self, input, hx=None):
        if hx is None:
            hx = (self._zeros(input), self._zeros(input))
        return _lstm_step(input, hx, self._weights())


class GRUCell(_CellBase):
    mode = "GRU"

    def forward(self, input, hx=None):
        hx = self._zeros(input) if hx is None else hx
        return _gru_step(input, hx, self._weights())


class _RNNBase(Module):
    mode = "RNN_TANH"

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device=None,
        dtype=None,
    ):
        super().__init__()
        if proj_size != 0:
            raise NotImplementedError(
                f"torch.nn.{type(self).__name__}(proj_size={proj_size}) is not supported yet "
                "by whylab (only proj_size=0)"
            )
        if not 0 <= dropout <= 1:
            raise ValueError(f"dropout should be a number in range [0, 1], got {dropout}")
        if num_layers < 1:
            raise ValueError(f"num_layers must be at least 1, got {num_layers}")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional = bidirectional
        directions = 2 if bidirectional else 1
        gates = _GATES[self.mode] * hidden_size
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else hidden_size * directions
            for suffix in ("", "_reverse")[:directions]:
                name = f"l{layer}{suffix}"
                setattr(
                    self,
                    f"weight_ih_{name}",
                    Parameter(whylab.empty(gates, layer_input, device=device, dtype=dtype)),
                )
                setattr(
                    self,
                    f"weight_hh_{name}",
                    Parameter(whylab.empty(gates, hidden_size, device=device, dtype=dtype)),
                )
                if bias:
                    for kind in ("ih", "hh"):
                        bias_ = whylab.empty(gates, device=device, dtype=dtype)
                        setattr(self, f"bias_{kind}_{name}", Parameter(bias_))
        _uniform_reset(self, hidden_size)

    def _layer_weights(self, layer: int, reverse: bool):
        name = f"l{layer}{'_reverse' if reverse else ''}"
        bias = (
            (getattr(self, f"bias_ih_{name}"), getattr(self, f"bias_hh_{name}"))
            if self.bias
            else (None, None)
        )
        return (getattr(self, f"weight_ih_{name}"), getattr(self, f"weight_hh_{name}"), *bias)

    def _run(self, input, hx):
        """Shared loop: ``input`` (T, N, F); ``hx`` per (layer, direction) states."""
        step = _STEPS[self.mode]
        directions = 2 if self.bidirectional else 1
        finals = []
        layer_input = input
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                state = hx[layer * directions + direction]
                weights = self._layer_weights(layer, direction == 1)
                order = range(layer_input.shape[0])
                steps = []
                for t in reversed(order) if direction == 1 else order:
                    state = step(layer_input[t], state, weights)
                    steps.append(state[0] if self.mode == "LSTM" else state)
                if direction == 1:
                    steps.reverse()
                outputs.append(whylab.stack(steps, 0))
                finals.append(state)
            layer_input = outputs[0] if directions == 1 else whylab.cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout)
        return layer_input, finals

    def forward(self, input, hx=None):
        batched = input.ndim == 3
        if input.ndim not in (2, 3):
            raise ValueError(
                f"{type(self).__name__}: expected 2-D or 3-D input, got {input.ndim}-D"
            )
        if not batched:
            input = input.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        directions = 2 if self.bidirectional else 1
        shape = (self.num_layers * directions, input.shape[1], self.hidden_size)
        lstm = self.mode == "LSTM"
        if hx is None:
            zeros = whylab.zeros(shape, dtype=input.dtype)
            hx = (zeros, zeros) if lstm else zeros
        elif not batched:
            hx = tuple(h.unsqueeze(1) for h in hx) if lstm else hx.unsqueeze(1)
        if lstm:
            states = [(hx[0][i], hx[1][i]) for i in range(shape[0])]
        else:
            states = [hx[i] for i in range(shape[0])]
        output, finals = self._run(input, states)
        if lstm:
            h_n = whylab.stack([h for h, _ in finals], 0)
            c_n = whylab.stack([c for _, c in finals], 0)
        else:
            h_n = whylab.stack(finals, 0)
        if not batched:
            output = output.squeeze(1)
            h_n = h_n.squeeze(1)
            c_n = c_n.squeeze(1) if lstm else None
        elif self.batch_first:
            output = output.transpose(0, 1)
        return (output, (h_n, c_n)) if lstm else (output, h_n)

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if self.batch_first:
            text += ", batch_first=True"
        if self.bidirectional:
            text += ", bidirectional=True"
        return text


class RNN(_RNNBase):
    def __init__(self, *args, nonlinearity: str = "tanh", **kwargs):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'")
        self.mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
        super().__init__(*args, **kwargs)


class LSTM(_RNNBase):
    mode = "LSTM"


class GRU(_RNNBase):
    mode = "GRU"
