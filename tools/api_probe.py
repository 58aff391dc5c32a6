"""Test one torch name against whylab: present, same signature, same result on a small call.

* **present** -- ``torch.nn.functional.relu`` is looked up as
  ``whylab.nn.functional.relu``, ``Tensor.sum`` as ``whylab.Tensor.sum``;
* **signature** -- torch's parameters come from :func:`inspect.signature` where torch
  writes the function in Python, else from the first line of its docstring
  (``add(input, other, *, alpha=1, out=None) -> Tensor``). whylab must take every one
  of them under the same name, its positional ones in the same order, with the same
  default, and must not require any parameter torch does not have;
* **behaviour** -- a small call is generated: for functions and methods the first of a
  few argument lists (a float64 (2, 3) tensor, a dim, a second tensor, a number, two
  sizes) that torch accepts is given to whylab too and the results compared (shape,
  dtype, values to 1e-6; random results by shape and dtype only); a module class is
  built from the first constructor arguments torch accepts, given torch's parameters
  and run on the first input torch accepts; an optimizer takes one step on a
  parameter of a quadratic.

A probe never writes files or changes torch's global state: names in :data:`NOT_CALLED`
are checked for presence and signature only.
"""

from __future__ import annotations

import inspect
import re
import warnings

import numpy as np

#: Names whose generated call could write files, change global state or start threads.
NOT_CALLED = re.compile(
    r"(^|\.)(save|load|set_\w+|use_\w+|manual_seed|seed|compile|jit|cuda|distributed|"
    r"multiprocessing|onnx|hub|backends|profiler|tensorboard|export|fx|register_\w+|"
    r"Tensor\.(backward|share_memory_|record_stream|pin_memory|cuda|to|cpu|numpy|"
    r"storage|untyped_storage|data_ptr|new_\w+|register_hook|retain_grad|apply_|map_))($|\.)"
)

RANDOM = re.compile(r"rand|empty|init\.|normal|dropout|bernoulli|multinomial|uniform|shuffle|"
                    r"Dropout|sample|exponential_|cauchy_|geometric_|log_normal_|random_")

#: Known refusals and gaps with their reason (a prefix of the torch name -> reason).
REASONS = {
    "torch.cuda.amp": "needs a GPU (mixed precision on CUDA)",
    "torch.amp": "needs a GPU (mixed precision on CUDA)",
    "torch.backends.cudnn": "needs a GPU (cuDNN)",
    "torch.backends.mps": "needs a GPU (Apple MPS)",
    "torch.mps": "needs a GPU (Apple MPS)",
    "torch.distributed": "no multi-process runtime (distributed training)",
    "torch.multiprocessing": "no multi-process runtime (shared-memory tensors)",
    "torch.nn.parallel": "no multi-device runtime",
    "torch.nn.DataParallel": "no multi-device runtime",
    "torch.jit": "no compiler (TorchScript)",
    "torch.compile": "no compiler",
    "torch.fx": "no graph capture",
    "torch.onnx": "no exporter",
    "torch.export": "no graph capture",
    "torch.complex": "no complex dtypes (NumPy has them; whylab's dtypes stop at floats)",
    "torch.view_as_complex": "no complex dtypes",
    "torch.view_as_real": "no complex dtypes",
    "torch.fft": "no torch.fft module (whylab.numerics.fft is its own API)",
    "torch.utils.tensorboard": "TensorBoard writer: outside a tensor library",
    "torch.hub": "downloads models: no network use",
    "torch.profiler": "no profiler",
    "torch.autograd.profiler": "no profiler",
    "torch.quantization": "no quantized dtypes",
    "torch.ao": "no quantized dtypes",
    "torch.sparse": "no sparse layouts",
    "torch.sparse_coo_tensor": "no sparse layouts",
    "Tensor.to_sparse": "no sparse layouts",
    "torch.utils.data.distributed": "no multi-process runtime (distributed training)",
    "torch.futures": "no asynchronous runtime (futures serve torch.distributed.rpc)",
    "torch.serialization.safe_globals": "whylab never unpickles under weights_only=True, so "
                                        "there is no allowlist (safety: pickles need the "
                                        "explicit weights_only=False)",
    "torch.serialization.add_safe_globals": "as torch.serialization.safe_globals",
    "torch.nn.modules": "torch's private module paths (used in type annotations); whylab "
                        "exports the classes from whylab.nn only",
}


def reason_for(name: str) -> str | None:
    for prefix, reason in REASONS.items():
        if name == prefix or name.startswith(prefix + ".") or name.startswith(prefix + "("):
            return reason
    return None


def lookup(root, dotted: str):
    """``root.a.b`` for ``dotted`` ``"a.b"``; raises AttributeError/ImportError."""
    value = root
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


def objects(name: str):
    """The torch object and the whylab object a scanned name stands for (whylab's may raise)."""
    import torch

    import whylab

    if name.startswith("Tensor."):
        return lookup(torch.Tensor, name[7:]), lambda: lookup(whylab.Tensor, name[7:])
    rest = name[len("torch."):]
    return lookup(torch, rest), lambda: lookup(whylab, rest)


# ------------------------------------------------------------------ signatures

_DOC_LINE = re.compile(r"^\s*(?:\.\. (?:function|method)::\s*)?([\w.]+)\((.*)$")

#: torch parameters that choose a backend or an implementation whylab has only one of,
#: or that torch deprecated: a missing one is noted in the row, not counted as a gap
#: (a program that passes one shows up in its keyword row).
BACKEND_ONLY = frozenset(
    "layout pin_memory memory_format foreach capturable differentiable fused size_average "
    "reduce non_blocking force sparse".split()
)


def _doc_overloads(obj, short_name: str):
    """Every signature line of torch's docstring for ``short_name`` (or ``__init__``)."""
    found = []
    for line in (getattr(obj, "__doc__", None) or "").replace("\\*", "*").split("\n"):
        match = _DOC_LINE.match(line)
        if match and match.group(1).split(".")[-1] in (short_name, "__init__"):
            inside = _inside_parentheses(match.group(2))
            if inside is not None:
                overload = _from_doc(inside)
                if all(n.isidentifier() for n, _, _ in overload):  # not an example's output
                    found.append(overload)
    return found


def _inside_parentheses(text: str) -> str | None:
    depth = 1
    for index, char in enumerate(text):
        depth += char in "([{"
        depth -= char in ")]}"
        if depth == 0:
            return text[:index]
    return None


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in text:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        parts.append(current.strip())
    return parts


def torch_parameters(obj, short_name: str):
    """``([(name, kind, default_text)], from_doc)`` of torch's signature, or None.

    kind is "pos" (positional or keyword), "kw" (keyword-only), "var" (``*args``),
    "varkw" (``**kwargs``); default_text is None for a required parameter. A
    Python signature of only ``*args, **kwargs`` (``nn.LSTM``) gives way to the
    docstring; a docstring with several overloads (``torch.normal``) gives the
    union of their parameters.
    """
    try:
        target = obj.__init__ if inspect.isclass(obj) else obj
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        signature = None
    if signature is not None:
        parameters = _from_signature(signature)
        if any(kind in ("pos", "kw") for _, kind, _ in parameters):
            return parameters, False
    overloads = _doc_overloads(obj, short_name)
    if not overloads:
        return None  # only ``*args, **kwargs`` and no docstring line: unknown
    union, seen = [], set()
    for overload in overloads:
        for parameter in overload:
            if parameter[0] not in seen:
                seen.add(parameter[0])
                union.append(parameter)
    return union, True


def _from_signature(signature):
    kinds = {
        inspect.Parameter.POSITIONAL_ONLY: "pos",
        inspect.Parameter.POSITIONAL_OR_KEYWORD: "pos",
        inspect.Parameter.KEYWORD_ONLY: "kw",
        inspect.Parameter.VAR_POSITIONAL: "var",
        inspect.Parameter.VAR_KEYWORD: "varkw",
    }
    result = []
    for parameter in signature.parameters.values():
        if parameter.name == "self":
            continue
        default = None if parameter.default is inspect.Parameter.empty else parameter.default
        text = None if parameter.default is inspect.Parameter.empty else _default_text(default)
        result.append((parameter.name, kinds[parameter.kind], text))
    return result


def _from_doc(text: str):
    result, keyword_only = [], False
    for part in _split_top_level(text):
        if part == "*":
            keyword_only = True
            continue
        if part.startswith("**"):
            result.append((part[2:], "varkw", None))
            continue
        if part.startswith("*"):
            result.append((part[1:], "var", None))
            keyword_only = True
            continue
        name, _, default = part.partition("=")
        name = name.split(":")[0].strip()
        if name == "self":
            continue
        result.append((name, "kw" if keyword_only else "pos", default.strip() or None))
    return result


def _default_text(value) -> str:
    text = repr(value) if not isinstance(value, str) else value
    return text.replace("torch.", "").replace("whylab.", "")


#: Defaults torch's docstrings print that its schemas give as None (``clone(*,
#: MemoryFormat? memory_format=None)``, ``std(..., Scalar? correction=None)``): whylab's
#: None matches them.
DOC_DEFAULTS_OF_NONE = {"memory_format": "preserve_format", "correction": "1"}

#: Keywords torch's parser takes that a docstring leaves out (torch.normal's factory
#: keywords; tests/compat/test_torch_api_gaps.py calls torch with them).
DOC_OMITS = {"torch.normal": ("requires_grad", "dtype", "device", "layout", "pin_memory")}


def _same_default(torch_text: str, ours: str, name: str = "") -> bool:
    if ours == "None" and DOC_DEFAULTS_OF_NONE.get(name) == torch_text.replace("torch.", ""):
        return True

    def normal(text):
        text = text.replace("torch.", "").replace("whylab.", "").strip("'\"")
        try:
            return repr(float(text))
        except ValueError:
            return text

    return normal(torch_text) == normal(ours)


def our_parameters(ours, is_method: bool):
    """whylab's parameters as :func:`torch_parameters` gives torch's (None if unknown)."""
    try:
        target = ours.__init__ if inspect.isclass(ours) else ours
        mine = _from_signature(inspect.signature(target))
    except (TypeError, ValueError):
        return None
    if is_method and inspect.isfunction(ours) and mine and mine[0][1] == "pos":
        # a function shared by whylab.max and Tensor.max: its first parameter is the tensor
        first = next(iter(inspect.signature(ours).parameters))
        if first != "self":
            mine = mine[1:]
    return mine


def signature_gaps(torch_obj, ours, name: str):
    """``(gaps, lacking_backend_only)``: what of torch's signature whylab lacks.

    gaps is [] when it matches and None when either signature is unknown.
    Positional names read from a docstring are not compared (torch's docstrings
    name some differently from the names its parser takes: ``matmul(tensor2)``).
    """
    short_name = name.split(".")[-1]
    found = torch_parameters(torch_obj, short_name)
    mine = our_parameters(ours, name.startswith("Tensor."))
    if found is None or mine is None:
        return None, []
    theirs, from_doc = found
    by_name = {n: (kind, default) for n, kind, default in mine}
    takes_any_keyword = any(kind == "varkw" for _, kind, _ in mine)
    takes_any_positional = any(kind == "var" for _, kind, _ in mine)
    gaps, lacking = [], []
    positional_theirs = [(n, d) for n, kind, d in theirs if kind == "pos"]
    positional_mine = [(n, d) for n, kind, d in mine if kind == "pos"]
    for n, kind, default in theirs:
        if kind in ("var", "varkw") or n == "out":
            continue  # catch-alls; out= is noted in the keyword rows when used
        if from_doc and kind == "pos" and default is None:
            continue  # required ones are compared by count below
        if n not in by_name:
            if takes_any_keyword:
                continue
            (lacking if n in BACKEND_ONLY or n.startswith("_") else gaps).append(f"{n}=")
            continue
        ours_default = by_name[n][1]
        if default is not None and ours_default is not None:
            if not _same_default(default, ours_default, n):
                gaps.append(f"{n}={ours_default} (torch: {default})")
        elif default is not None and ours_default is None and not from_doc:
            gaps.append(f"{n} required (torch: {default})")
    if from_doc:
        required = sum(1 for _, d in positional_theirs if d is None)
        if len(positional_mine) < required and not takes_any_positional:
            gaps.append(f"{len(positional_mine)} positional parameters (torch: {required})")
    else:
        names_theirs = [n for n, _ in positional_theirs]
        names_mine = [n for n, _ in positional_mine]
        common = [n for n in names_theirs if n in names_mine]
        if [n for n in names_mine if n in common] != common and not takes_any_positional:
            gaps.append("positional order differs")
    torch_names = {n for n, _, _ in theirs}
    required_theirs = sum(1 for _, kind, d in theirs if kind == "pos" and d is None)
    required_mine = [n for n, kind, d in mine if kind in ("pos", "kw") and d is None]
    if from_doc:
        if len(required_mine) > max(required_theirs, len(positional_theirs)):
            gaps.append(f"requires {len(required_mine)} arguments")
    else:
        gaps += [f"requires {n}" for n in required_mine if n not in torch_names]
    return gaps, lacking


# ------------------------------------------------------------------ behaviour


def _values(lib, value):
    """A comparable form of a result: nested tuples of (shape, dtype, array) and Python values."""
    if isinstance(value, lib.Tensor):
        array = value.detach().cpu().numpy() if hasattr(value, "detach") else value.numpy()
        return ("tensor", tuple(value.shape), str(value.dtype).split(".")[-1], array)
    if isinstance(value, (tuple, list)):
        return tuple(_values(lib, v) for v in value)
    if isinstance(value, np.ndarray):
        return ("array", value.shape, str(value.dtype), value)
    if isinstance(value, str):
        return value.replace("whylab", "torch")
    if isinstance(value, (bool, int, float, type(None))):
        return value
    return ("object", type(value).__name__)


def same_values(a, b, random: bool) -> bool:
    if isinstance(a, tuple) and a and a[0] in ("tensor", "array"):
        if not (isinstance(b, tuple) and b and b[0] == a[0] and a[1:3] == b[1:3]):
            return False
        if random:
            return True
        x, y = np.asarray(a[3], dtype=float), np.asarray(b[3], dtype=float)
        return np.allclose(x, y, rtol=1e-6, atol=1e-8, equal_nan=True)
    if isinstance(a, tuple):
        return (isinstance(b, tuple) and len(a) == len(b)
                and all(same_values(x, y, random) for x, y in zip(a, b, strict=True)))
    if isinstance(a, float) and isinstance(b, float):
        return random or np.isclose(a, b, rtol=1e-6, equal_nan=True)
    return a == b or random


def _sample(lib, shape=(2, 3)):
    data = np.linspace(0.5, 1.5, int(np.prod(shape))).reshape(shape)
    return lib.tensor(data, dtype=lib.float64)


def _argument_lists(lib):
    x = _sample(lib)
    return [(x,), (x, 1), (x, _sample(lib) * 0.5 + 0.25), (x, 0.5), (2, 3), ()]


def _call(lib, fn_of_lib, arguments):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn_of_lib(lib)(*arguments(lib))


def behaviour(name: str, torch_obj, ours) -> str:
    """"same", "differs: ...", or "not run" (no generated call torch accepts)."""
    import torch

    import whylab

    if NOT_CALLED.search(name) or not callable(torch_obj):
        return "not run"
    random = bool(RANDOM.search(name))
    if inspect.isclass(torch_obj):
        if issubclass(torch_obj, torch.nn.Module):
            return _module_behaviour(torch_obj, ours, random)
        if issubclass(torch_obj, torch.optim.Optimizer):
            return _optimizer_behaviour(torch_obj, ours)
        return "not run"
    is_method = name.startswith("Tensor.")
    method = name[7:]
    for index in range(len(_argument_lists(torch))):
        def fn(lib, index=index):
            arguments = _argument_lists(lib)[index]
            if is_method:
                receiver = _sample(lib)
                return getattr(receiver, method)(*arguments[1:]) if arguments else None
            target = torch_obj if lib is torch else ours
            return target(*arguments)

        if is_method and index >= 4:
            break
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected = _values(torch, fn(torch))
        except Exception:  # noqa: BLE001 - a call torch refuses is not a generated call
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                actual = _values(whylab, fn(whylab))
        except Exception as error:  # noqa: BLE001
            return f"differs: raises {type(error).__name__}: {str(error)[:80]}"
        if same_values(expected, actual, random):
            return "same"
        return "differs: another result"
    return "not run"


def _module_behaviour(torch_cls, our_cls, random: bool) -> str:
    import torch

    import whylab

    for arguments in [(), (3,), (3, 3), (3, 3, 3)]:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs = torch_cls(*arguments).double()
        except Exception:  # noqa: BLE001
            continue
        for shape in [(2, 3), (1, 3, 5, 5), (2, 3, 4), (2, 3, 4, 4, 4)]:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    theirs(_sample(torch, shape))  # a lazy module takes its sizes here
                    expected = _values(torch, theirs(_sample(torch, shape)))
            except Exception:  # noqa: BLE001
                continue
            try:
                mine = our_cls(*arguments).double()
                mine(_sample(whylab, shape))
                state = {k: whylab.tensor(v.detach().numpy())
                         for k, v in theirs.state_dict().items()}
                mine.load_state_dict(state)
            except Exception as error:  # noqa: BLE001
                return f"differs: raises {type(error).__name__}: {str(error)[:80]}"
            try:
                actual = _values(whylab, mine(_sample(whylab, shape)))
            except Exception as error:  # noqa: BLE001
                return f"differs: forward raises {type(error).__name__}: {str(error)[:80]}"
            return "same" if same_values(expected, actual, random) else "differs: another result"
        return "not run"
    return "not run"


def _optimizer_behaviour(torch_cls, our_cls) -> str:
    import torch

    import whylab

    def step(lib, cls):
        p = lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64, requires_grad=True)
        optimizer = cls([p], lr=0.1)
        for _ in range(2):
            optimizer.zero_grad()
            ((p * p).sum() + p.sum()).backward()
            optimizer.step() if cls.__name__ != "LBFGS" else optimizer.step(lambda: 0.0)
        return p.detach().numpy()

    try:
        expected = step(torch, torch_cls)
    except Exception:  # noqa: BLE001
        return "not run"
    try:
        actual = step(whylab, our_cls)
    except Exception as error:  # noqa: BLE001
        return f"differs: raises {type(error).__name__}: {str(error)[:80]}"
    return "same" if np.allclose(expected, actual, rtol=1e-6) else "differs: another result"
