"""whylab.save / whylab.load: .npz without pickle, nested dicts, dtypes, optimizer state."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

import whylab
import whylab.nn as wnn
import whylab.optim as woptim


def test_module_state_dict_round_trip_preserves_dtypes_and_values(tmp_path):
    model = wnn.Sequential(wnn.Linear(3, 4), wnn.LayerNorm(4), wnn.Linear(4, 2)).double()
    model[0].register_buffer("counter", whylab.tensor([3, 4], dtype=whylab.int64))
    path = tmp_path / "model.npz"
    whylab.save(model.state_dict(), path)
    loaded = whylab.load(path)
    original = model.state_dict()
    assert list(loaded) == list(original)
    for name, tensor in original.items():
        assert isinstance(loaded[name], whylab.Tensor)
        assert loaded[name].dtype == tensor.dtype, name
        np.testing.assert_array_equal(loaded[name].numpy(), tensor.numpy())
    fresh = wnn.Sequential(wnn.Linear(3, 4), wnn.LayerNorm(4), wnn.Linear(4, 2)).double()
    fresh[0].register_buffer("counter", whylab.zeros(2, dtype=whylab.int64))
    fresh.load_state_dict(loaded)
    x = whylab.ones(5, 3, dtype=whylab.float64)
    np.testing.assert_array_equal(fresh(x).detach().numpy(), model(x).detach().numpy())


def test_path_is_written_exactly_as_given(tmp_path):
    path = tmp_path / "weights.bin"
    whylab.save({"w": whylab.ones(2)}, str(path))
    assert path.exists() and not (tmp_path / "weights.bin.npz").exists()
    assert zipfile.is_zipfile(path)


def test_nested_structure_with_int_keys_tuples_and_plain_values(tmp_path):
    state = {
        "state": {0: {"step": 7, "exp_avg": whylab.ones(2, 2)}},
        "param_groups": [{"lr": 0.001, "betas": (0.9, 0.999), "amsgrad": False,
                          "name": "head", "foreach": None, "params": [0]}],
        "array": np.arange(3, dtype=np.int32),
    }
    buffer = io.BytesIO()
    whylab.save(state, buffer)
    buffer.seek(0)
    with zipfile.ZipFile(buffer) as archive:
        assert "state.0.exp_avg.npy" in archive.namelist()
    buffer.seek(0)
    loaded = whylab.load(buffer)
    assert loaded["param_groups"] == state["param_groups"]
    assert loaded["state"][0]["step"] == 7
    assert list(loaded["state"]) == [0]
    np.testing.assert_array_equal(loaded["state"][0]["exp_avg"].numpy(), np.ones((2, 2)))
    assert loaded["array"].dtype == np.int32 and isinstance(loaded["array"], np.ndarray)


def test_optimizer_state_dict_round_trip_through_a_file(tmp_path):
    param = wnn.Parameter(whylab.tensor(np.array([1.0, -2.0, 0.5])))
    optimizer = woptim.Adam([param], lr=0.1, amsgrad=True)
    for step in range(3):
        param.grad = whylab.tensor(np.array([0.3, -0.1, 0.2]) * (step + 1))
        optimizer.step()
    whylab.save(optimizer.state_dict(), tmp_path / "optim.npz")

    copy = wnn.Parameter(param.detach().clone())
    resumed = woptim.Adam([copy], lr=0.5)
    resumed.load_state_dict(whylab.load(tmp_path / "optim.npz"))
    for opt, p in ((optimizer, param), (resumed, copy)):
        p.grad = whylab.tensor(np.array([0.05, 0.05, -0.3]))
        opt.step()
    np.testing.assert_array_equal(copy.detach().numpy(), param.detach().numpy())


def test_object_arrays_are_refused_on_load(tmp_path):
    path = tmp_path / "evil.npz"
    np.savez(path, weight=np.ones(2), payload=np.array([{"a": 1}], dtype=object))
    with pytest.raises(ValueError, match="refuses entry 'payload'.*unpickling"):
        whylab.load(path)


def test_plain_numpy_npz_loads_as_flat_tensors(tmp_path):
    path = tmp_path / "plain.npz"
    np.savez(path, a=np.ones(3, dtype=np.float32), b=np.arange(4))
    loaded = whylab.load(path)
    assert list(loaded) == ["a", "b"]
    assert loaded["a"].dtype == whylab.float32 and loaded["b"].dtype == whylab.int64


def test_save_refuses_what_it_cannot_store_safely(tmp_path):
    with pytest.raises(TypeError, match="object array"):
        whylab.save({"x": np.array([object()])}, tmp_path / "x.npz")
    with pytest.raises(TypeError, match="cannot store a set"):
        whylab.save({"x": {1, 2}}, tmp_path / "x.npz")
    with pytest.raises(TypeError, match="cannot store a object"):
        whylab.save(object(), tmp_path / "x.npz")
    with pytest.raises(ValueError, match="same entry name 'a.b'"):
        whylab.save({"a": {"b": whylab.ones(1)}, "a.b": whylab.ones(1)}, tmp_path / "x.npz")


def test_plain_tensors_and_nested_containers_round_trip(tmp_path):
    path = tmp_path / "t.pt"
    whylab.save(whylab.arange(5.0), path)
    assert whylab.load(path, weights_only=True).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    bundle = [whylab.ones(2), (whylab.zeros(1), 3), {"w": whylab.eye(2)}]
    whylab.save(bundle, path)
    back = whylab.load(path, map_location="cpu")
    assert isinstance(back, list) and isinstance(back[1], tuple) and back[1][1] == 3
    assert back[2]["w"].tolist() == [[1.0, 0.0], [0.0, 1.0]]
    with pytest.raises(ValueError, match="map_location must be 'cpu'"):
        whylab.load(path, map_location="cuda:0")


def test_corrupt_meta_is_reported(tmp_path):
    path = tmp_path / "bad.npz"
    np.savez(path, __whylab_meta__=np.array("{not json"))
    with pytest.raises(ValueError, match="not valid JSON"):
        whylab.load(path)
