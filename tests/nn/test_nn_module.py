"""The Module API: registration, traversal order, modes, state dicts, dtype conversion."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
import torch

import whylab
import whylab.nn as wnn


class Block(wnn.Module):
    def __init__(self):
        super().__init__()
        self.fc = wnn.Linear(3, 4)
        self.norm = wnn.LayerNorm(4)
        self.register_buffer("steps", whylab.zeros(1, dtype=whylab.int64))
        self.register_buffer("scratch", whylab.zeros(2), persistent=False)
        self.scale = wnn.Parameter(whylab.ones(1))

    def forward(self, x):
        return self.norm(self.fc(x)) * self.scale


class TorchBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 4)
        self.norm = torch.nn.LayerNorm(4)
        self.register_buffer("steps", torch.zeros(1, dtype=torch.int64))
        self.register_buffer("scratch", torch.zeros(2), persistent=False)
        self.scale = torch.nn.Parameter(torch.ones(1))


def build_pair():
    w_model = wnn.Sequential(Block(), wnn.ReLU(), wnn.Linear(4, 2))
    t_model = torch.nn.Sequential(TorchBlock(), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    return w_model, t_model


def test_named_parameters_buffers_and_state_dict_keys_match_torch():
    w_model, t_model = build_pair()
    assert [n for n, _ in w_model.named_parameters()] == [n for n, _ in t_model.named_parameters()]
    assert [n for n, _ in w_model.named_buffers()] == [n for n, _ in t_model.named_buffers()]
    assert list(w_model.state_dict()) == list(t_model.state_dict())
    assert "0.scratch" not in w_model.state_dict()


def test_children_and_modules_match_torch():
    w_model, t_model = build_pair()
    assert [n for n, _ in w_model.named_children()] == [n for n, _ in t_model.named_children()]
    assert [n for n, _ in w_model.named_modules()] == [n for n, _ in t_model.named_modules()]
    assert [type(m).__name__ for m in w_model.modules()] == [
        type(m).__name__.replace("TorchBlock", "Block") for m in t_model.modules()
    ]
    assert len(list(w_model.children())) == 3


def test_repr_matches_torch():
    w_model, t_model = build_pair()
    w_model.append(wnn.Dropout(0.1))
    t_model.append(torch.nn.Dropout(0.1))
    w_model.append(wnn.Embedding(5, 2, padding_idx=1))
    t_model.append(torch.nn.Embedding(5, 2, padding_idx=1))
    w_model.append(wnn.Flatten())
    t_model.append(torch.nn.Flatten())
    assert repr(w_model) == repr(t_model).replace("TorchBlock", "Block")


def test_shared_parameter_is_listed_once():
    first = wnn.Linear(2, 2)
    model = wnn.Sequential(first, wnn.Linear(2, 2))
    model[1].weight = first.weight
    names = [n for n, _ in model.named_parameters()]
    assert names == ["0.weight", "0.bias", "1.bias"]


def test_train_and_eval_reach_every_submodule():
    model = wnn.Sequential(wnn.Linear(2, 2), wnn.Sequential(wnn.Dropout(0.5)))
    assert all(m.training for m in model.modules())
    assert model.eval() is model
    assert not any(m.training for m in model.modules())
    model.train()
    assert all(m.training for m in model.modules())


def test_eval_turns_dropout_off_inside_a_model():
    whylab.manual_seed(0)
    model = wnn.Sequential(wnn.Dropout(0.5))
    x = whylab.ones(100, dtype=whylab.float64)
    assert (model(x).numpy() == 0).any()
    model.eval()
    np.testing.assert_array_equal(model(x).numpy(), np.ones(100))


def test_load_state_dict_copies_in_place_and_round_trips():
    source, _ = build_pair()
    target, _ = build_pair()
    weight_object = target[0].fc.weight
    result = target.load_state_dict(source.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert target[0].fc.weight is weight_object
    for (name, a), (_, b) in zip(source.state_dict().items(), target.state_dict().items(),
                                 strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=name)


def test_load_state_dict_strict_names_missing_and_unexpected_keys():
    model = wnn.Sequential(wnn.Linear(2, 3))
    state = model.state_dict()
    del state["0.bias"]
    state["0.extra"] = whylab.zeros(1)
    with pytest.raises(RuntimeError) as error:
        model.load_state_dict(state)
    message = str(error.value)
    assert 'Missing key(s) in state_dict: "0.bias"' in message
    assert 'Unexpected key(s) in state_dict: "0.extra"' in message
    assert message.startswith("Error(s) in loading state_dict for Sequential")

    result = model.load_state_dict(state, strict=False)
    assert result.missing_keys == ["0.bias"]
    assert result.unexpected_keys == ["0.extra"]


def test_load_state_dict_size_mismatch_names_both_shapes():
    model = wnn.Linear(2, 3)
    state = OrderedDict(weight=whylab.zeros(3, 5), bias=whylab.zeros(3))
    with pytest.raises(RuntimeError, match=r"size mismatch for weight.*\(3, 5\).*\(3, 2\)"):
        model.load_state_dict(state)


def test_load_state_dict_assign_replaces_tensors():
    model = wnn.Linear(2, 3)
    new_weight = whylab.ones(3, 2)
    model.load_state_dict({"weight": new_weight, "bias": whylab.zeros(3)}, assign=True)
    assert isinstance(model.weight, wnn.Parameter)
    assert model.weight.requires_grad
    new_weight.add_(1)  # shares storage with the loaded tensor
    np.testing.assert_array_equal(model.weight.detach().numpy(), 2.0)


def test_to_dtype_converts_floats_keeps_ints_and_parameter_identity():
    model = Block()
    weight = model.fc.weight
    model.to(whylab.float64)
    assert model.fc.weight is weight
    assert model.fc.weight.dtype == whylab.float64
    assert model.scale.dtype == whylab.float64
    assert model.steps.dtype == whylab.int64
    assert model.scratch.dtype == whylab.float64
    assert model.fc.weight.requires_grad
    out = model(whylab.ones(2, 3, dtype=whylab.float64))
    out.sum().backward()
    assert weight.grad is not None and weight.grad.dtype == whylab.float64


def test_to_rejects_integer_dtype():
    with pytest.raises(TypeError, match="floating point"):
        wnn.Linear(2, 2).to(whylab.int64)


def test_zero_grad_on_module():
    model = wnn.Linear(2, 2)
    model(whylab.ones(1, 2)).sum().backward()
    model.zero_grad(set_to_none=False)
    assert all(np.all(p.grad.numpy() == 0) for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_assignment_rules():
    model = wnn.Linear(2, 2)
    with pytest.raises(TypeError, match="cannot assign 'Tensor' as parameter 'weight'"):
        model.weight = whylab.ones(2, 2)
    model.bias = None
    assert model.bias is None and "bias" not in model.state_dict()
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nothing'"):
        _ = model.nothing
    model.child = wnn.ReLU()
    assert [n for n, _ in model.named_children()] == ["child"]
    del model.child
    assert list(model.children()) == []


def test_parameter_is_a_leaf_that_shares_storage():
    data = whylab.zeros(3)
    param = wnn.Parameter(data)
    assert param.requires_grad and param.is_leaf and isinstance(param, whylab.Tensor)
    data.add_(1)
    np.testing.assert_array_equal(param.detach().numpy(), 1.0)
    assert not wnn.Parameter(data, requires_grad=False).requires_grad
    assert repr(param).startswith("Parameter containing:")


def test_missing_forward_is_a_clear_error():
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        wnn.Module()(1)


def test_sequential_indexing():
    model = wnn.Sequential(wnn.Linear(2, 2), wnn.ReLU(), wnn.Tanh())
    assert isinstance(model[-1], wnn.Tanh)
    assert isinstance(model[1:], wnn.Sequential) and len(model[1:]) == 2
    with pytest.raises(IndexError, match="index 3 is out of range"):
        model[3]
    named = wnn.Sequential(OrderedDict(first=wnn.ReLU(), second=wnn.Tanh()))
    assert [n for n, _ in named.named_children()] == ["first", "second"]


def test_deepcopy_gives_independent_parameters():
    import copy

    model = wnn.Sequential(wnn.Linear(2, 3), wnn.LayerNorm(3))
    clone = copy.deepcopy(model)
    assert clone[0].weight is not model[0].weight
    assert isinstance(clone[0].weight, wnn.Parameter) and clone[0].weight.requires_grad
    with whylab.no_grad():
        clone[0].weight.add_(1)
    assert not np.array_equal(clone[0].weight.detach().numpy(), model[0].weight.detach().numpy())
