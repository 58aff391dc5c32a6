"""Saving and loading state dicts as NumPy ``.npz`` archives, without pickle.

``torch.save`` pickles arbitrary Python objects, and loading a pickle can run any code the
file's author chose. whylab's format is deliberately narrower: an ``.npz`` archive (a zip of
``.npy`` arrays) read with ``allow_pickle=False``, so loading a file can only ever produce
arrays, numbers and strings.

One exception follows torch: a whole ``nn.Module`` (``save(model, f)``) cannot be written as
arrays, so it is pickled, behind a header of its own (:data:`PICKLE_MAGIC`). Loading such a
file is refused by default, as torch >= 2.6 refuses it (``weights_only`` defaults to True,
with torch's explanation); ``load(f, weights_only=False)`` is the explicit opt-in that
unpickles it, and, as in torch, is only safe for a file from a trusted source.

Layout of a file written by :func:`save`:

* every tensor (or NumPy array) is one archive entry, named by its path in the nested dict
  joined with ``'.'`` - ``{"state": {0: {"exp_avg": t}}}`` stores ``t`` as ``state.0.exp_avg``;
  a module's state dict, whose keys are already dotted, is stored under its own keys;
* one more entry, ``__whylab_meta__``, is a JSON text (a NumPy unicode array, not an object
  array) describing the structure: which keys were integers, which containers were lists or
  tuples, and the plain Python values (numbers, booleans, strings, None) such as an
  optimizer's learning rate or step counter.

:func:`load` rebuilds the same nested structure with whylab tensors of the stored dtype. An
``.npz`` written by plain NumPy (no meta entry) loads as a flat dict of tensors.
"""

from __future__ import annotations

import json
import os
import pickle
import sys
from collections import OrderedDict
from typing import Any

import numpy as np

from whylab._tensor.tensor import Tensor
from whylab.dispatch.native.factory import from_numpy

META_ENTRY = "__whylab_meta__"
FORMAT_NAME = "whylab-npz"
FORMAT_VERSION = 1
#: The first bytes of a file that holds a pickled module rather than an .npz archive.
PICKLE_MAGIC = b"WHYLAB-PICKLED-MODULE\n"

WEIGHTS_ONLY_REFUSAL = (
    "Weights only load failed. This file can still be loaded, to do so you have two options, "
    "do those steps only if you trust the source of the checkpoint.\n"
    "\t(1) As in PyTorch 2.6 and later, the default value of the `weights_only` argument of "
    "`load` is True. Re-running `load` with `weights_only` set to False will likely succeed, "
    "but it can result in arbitrary code execution. Do it only if you got the file from a "
    "trusted source.\n"
    "\t(2) Alternatively, save the module's `state_dict()` instead and load it into a new "
    "module with `load_state_dict`.\n"
    "WeightsUnpickler error: the file holds a pickled {kind}, which is not an allowed global "
    "when weights_only=True."
)


def _is_module(obj) -> bool:
    module_file = sys.modules.get("whylab.nn.module")  # no module exists before nn is loaded
    return module_file is not None and isinstance(obj, module_file.Module)


def save(obj, f, pickle_module=pickle, pickle_protocol=2) -> None:
    """Write a tensor, or a (possibly nested) container of tensors and plain values, as ``.npz``.

    Args:
        obj: a dict such as ``model.state_dict()`` or ``optimizer.state_dict()``, a tensor,
            or a list/tuple. Dict keys are strings or integers; values are whylab tensors,
            NumPy arrays, dicts, lists, tuples, or plain ``int``/``float``/``bool``/``str``/
            ``None``.
        f: a path (written exactly as given; no ``.npz`` is appended) or a binary file.
        pickle_module, pickle_protocol: as in torch; used only for a whole ``nn.Module``,
            which is pickled (see the module docstring).

    Raises:
        TypeError: for a value of another type (e.g. an arbitrary object), or an object array.
        ValueError: if two different paths flatten to the same archive entry name.
    """
    if _is_module(obj):
        _write(f, lambda handle: (handle.write(PICKLE_MAGIC),
                                  pickle_module.dump(obj, handle, protocol=pickle_protocol)))
        return
    arrays: dict[str, np.ndarray] = {}
    # A dict's entries are named by their keys; anything else is stored under "root".
    tree = _encode(obj, [] if isinstance(obj, dict) else ["root"], arrays)
    meta = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "tree": tree}
    arrays[META_ENTRY] = np.array(json.dumps(meta))
    _write(f, lambda handle: np.savez(handle, **arrays))


def _write(f, write) -> None:
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as handle:
            write(handle)
    else:
        write(f)


def _pickled_module(f, weights_only, pickle_module):
    """The unpickled module if ``f`` holds one and ``weights_only`` is False; else None."""
    handle = open(f, "rb") if isinstance(f, (str, os.PathLike)) else f
    try:
        start = handle.tell()
        if handle.read(len(PICKLE_MAGIC)) != PICKLE_MAGIC:
            handle.seek(start)
            return None
        if weights_only is not False:
            raise pickle.UnpicklingError(WEIGHTS_ONLY_REFUSAL.format(kind="nn.Module"))
        return (pickle_module or pickle).load(handle)
    finally:
        if handle is not f:
            handle.close()


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Read a file written by :func:`save` (or any pickle-free ``.npz``) into whylab tensors.

    Args:
        f: a path or a binary file.
        map_location, pickle_module, mmap: accepted for torch's signature; tensors load
            on the CPU (a ``map_location`` other than "cpu" is refused).
        weights_only: an ``.npz`` file is never unpickled, whatever its value. A file
            holding a pickled module is refused unless ``weights_only=False`` (torch's
            default, True since 2.6, refuses it the same way).

    Returns:
        The saved nested structure, with tensors as whylab tensors of the stored dtype.
        A plain NumPy ``.npz`` gives an ordered dict ``{entry name: tensor}``.

    Raises:
        pickle.UnpicklingError: for a pickled module without ``weights_only=False``.
        ValueError: if an entry holds Python objects (which would need pickle) or the
            structure description is malformed.
    """
    if map_location not in (None, "cpu") and str(map_location) != "cpu":
        raise ValueError(f"whylab.load: map_location must be 'cpu', got {map_location!r}")
    module = _pickled_module(f, weights_only, pickle_module)
    if module is not None:
        return module
    with np.load(f, allow_pickle=False) as archive:
        names = list(archive.files)
        arrays = {name: _read_entry(archive, name) for name in names}
    if META_ENTRY not in arrays:
        return OrderedDict((name, _to_tensor(array)) for name, array in arrays.items())
    try:
        meta = json.loads(str(arrays.pop(META_ENTRY)))
    except json.JSONDecodeError as error:
        raise ValueError(f"whylab.load: {META_ENTRY} is not valid JSON ({error})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT_NAME:
        raise ValueError(f"whylab.load: {META_ENTRY} does not describe a {FORMAT_NAME} file")
    if meta.get("version") != FORMAT_VERSION:
        raise ValueError(
            f"whylab.load: file format version {meta.get('version')!r} is not supported "
            f"(this whylab reads version {FORMAT_VERSION})"
        )
    return _decode(meta.get("tree"), arrays)


# ------------------------------------------------------------------------- writing
def _entry_name(path: list) -> str:
    return ".".join(str(part) for part in path)


def _add_array(array: np.ndarray, path: list, arrays: dict) -> str:
    if array.dtype.hasobject:
        raise TypeError(
            f"whylab.save: '{_entry_name(path)}' is an object array; only numeric, boolean "
            "and string arrays can be stored without pickle"
        )
    name = _entry_name(path)
    if name == "" or name == META_ENTRY:
        raise ValueError(f"whylab.save: cannot store an array under the entry name {name!r}")
    if name in arrays:
        raise ValueError(
            f"whylab.save: two values flatten to the same entry name '{name}'; "
            "rename keys so that their '.'-joined paths differ"
        )
    arrays[name] = np.ascontiguousarray(array)
    return name


def _encode(value: Any, path: list, arrays: dict) -> dict:
    """Describe ``value`` as a JSON-able node, moving arrays into ``arrays``."""
    if isinstance(value, Tensor):
        return {"kind": "tensor", "entry": _add_array(value.detach().numpy(), path, arrays)}
    if isinstance(value, np.ndarray):
        return {"kind": "ndarray", "entry": _add_array(value, path, arrays)}
    if isinstance(value, dict):
        items = []
        for key, item in value.items():
            if isinstance(key, bool) or not isinstance(key, (str, int)):
                raise TypeError(
                    f"whylab.save: dict keys must be str or int; got {type(key).__name__} "
                    f"at '{_entry_name(path)}'"
                )
            key_kind = "int" if isinstance(key, int) else "str"
            items.append([key_kind, key, _encode(item, path + [key], arrays)])
        return {"kind": "dict", "items": items}
    if isinstance(value, (list, tuple)):
        kind = "list" if isinstance(value, list) else "tuple"
        items = [_encode(item, path + [index], arrays) for index, item in enumerate(value)]
        return {"kind": kind, "items": items}
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"kind": "value", "value": value}
    if isinstance(value, np.generic) and not isinstance(value, np.object_):
        return {"kind": "ndarray", "entry": _add_array(np.asarray(value), path, arrays)}
    raise TypeError(
        f"whylab.save cannot store a {type(value).__name__} at '{_entry_name(path)}'; "
        "it stores tensors, arrays, dicts, lists, tuples, numbers, booleans, strings and None"
    )


# ------------------------------------------------------------------------- reading
def _read_entry(archive, name: str) -> np.ndarray:
    try:
        return archive[name]
    except ValueError as error:
        if "allow_pickle" in str(error):
            raise ValueError(
                f"whylab.load refuses entry '{name}': it holds Python objects, which could "
                "only be read by unpickling (allow_pickle=False)"
            ) from None
        raise


def _to_tensor(array: np.ndarray):
    return from_numpy(np.array(array, copy=True))


def _decode(node: Any, arrays: dict) -> Any:
    if not isinstance(node, dict) or "kind" not in node:
        raise ValueError(f"whylab.load: malformed structure node {node!r}")
    kind = node["kind"]
    if kind in ("tensor", "ndarray"):
        entry = node.get("entry")
        if entry not in arrays:
            raise ValueError(f"whylab.load: structure refers to a missing entry {entry!r}")
        array = arrays[entry]
        return _to_tensor(array) if kind == "tensor" else np.array(array, copy=True)
    if kind == "dict":
        result = {}
        for key_kind, key, item in node["items"]:
            result[int(key) if key_kind == "int" else str(key)] = _decode(item, arrays)
        return result
    if kind == "list":
        return [_decode(item, arrays) for item in node["items"]]
    if kind == "tuple":
        return tuple(_decode(item, arrays) for item in node["items"])
    if kind == "value":
        return node["value"]
    raise ValueError(f"whylab.load: unknown structure kind {kind!r}")
