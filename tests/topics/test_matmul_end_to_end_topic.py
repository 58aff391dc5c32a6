"""The matmul-end-to-end topic: the BLAS-call derivation replayed over many layouts, every
layout and gradient choice of the experiments, and the page's formulas.

``whylab check --controls`` for the topic runs in test_every_topic_survives_its_controls.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg  # noqa: F401 - loads SciPy's own OpenBLAS before the lookup below
import scs  # noqa: F401 - and SCS's, an older build whose dgemv rounds differently
from hypothesis import given, settings
from hypothesis import strategies as st

from whylab.topics.matmul_end_to_end import blas_call
from whylab.topics.matmul_end_to_end import roofline_experiment as roof
from whylab.topics.matmul_end_to_end.backward_experiment import backward
from whylab.topics.matmul_end_to_end.call_experiment import LAYOUTS, one_call

LIBRARY = blas_call.numpy_blas()


def test_the_library_found_is_the_blas_numpy_was_built_against():
    """With three OpenBLAS builds loaded, the one found is the build NumPy's own config names
    (its version), not merely the first threadpoolctl lists."""
    built = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    if not built.get("found") or "version" not in built:
        pytest.skip("this NumPy records no BLAS version")
    assert LIBRARY is not None
    assert LIBRARY.info["version"].split(".")[:3] == built["version"].split(".")[:3]


def not_passed(result):
    return [f"{c.id}: {c.measured_in('en')} vs {c.expected_in('en')}"
            for c in result.checks if c.state != "passed"]


def stored(rng, rows, cols, kind):
    """A rows×cols float64 array laid out as ``kind``."""
    if kind == "c":
        return rng.standard_normal((rows, cols))
    if kind == "f":
        return np.asfortranarray(rng.standard_normal((rows, cols)))
    if kind == "every-other-column":
        return rng.standard_normal((rows, 2 * cols))[:, ::2]
    if kind == "wider":
        return rng.standard_normal((rows, cols + 3))[:, :cols]
    return rng.standard_normal((rows, cols))[::-1]  # negative row stride


KINDS = ("c", "f", "every-other-column", "wider", "reversed")


@settings(max_examples=60, deadline=None)
@given(m=st.integers(2, 40), k=st.integers(2, 40), n=st.integers(1, 40),
       kind_a=st.sampled_from(KINDS), kind_b=st.sampled_from(KINDS), seed=st.integers(0, 99))
def test_replaying_the_derived_call_reproduces_np_dot_bit_for_bit(m, k, n, kind_a, kind_b, seed):
    rng = np.random.default_rng(seed)
    a, b = stored(rng, m, k, kind_a), stored(rng, k, n, kind_b)
    call = blas_call.derive_call(a, b)
    assert call.routine in ("dgemm", "dgemv")
    assert np.array_equal(blas_call.replay(call, a, b, LIBRARY), np.dot(a, b))


@pytest.mark.parametrize(("kind_a", "kind_b", "expected"), [
    # Read off numpy/_core/src/common/cblasfuncs.c for a 5×7 times 7×3 product
    ("c", "c", ("dgemm", "N", "N", 7, 3, ())),
    ("c", "f", ("dgemm", "N", "T", 7, 7, ())),
    ("f", "c", ("dgemm", "T", "N", 5, 3, ())),
    ("c", "wider", ("dgemm", "N", "N", 7, 3, ("b",))),  # not contiguous: copied, ldb = 3
    ("reversed", "c", ("dgemm", "N", "N", 7, 3, ("a",))),  # negative stride: copied
])
def test_derived_flags_and_leading_dimensions(kind_a, kind_b, expected):
    rng = np.random.default_rng(0)
    call = blas_call.derive_call(stored(rng, 5, 7, kind_a), stored(rng, 7, 3, kind_b))
    assert (call.routine, call.trans_a, call.trans_b, call.lda, call.ldb, call.copied) == expected


def test_a_times_its_own_transpose_is_syrk_and_a_copy_is_not():
    a = np.random.default_rng(1).standard_normal((6, 4))
    assert blas_call.derive_call(a, a.T).routine == "dsyrk"
    assert blas_call.derive_call(a, a.T.copy()).routine == "dgemm"
    assert np.array_equal(blas_call.replay(blas_call.derive_call(a, a.T), a, a.T, LIBRARY),
                          np.dot(a, a.T))


def test_a_wrong_flag_does_not_replay():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((6, 6)), np.asfortranarray(rng.standard_normal((6, 6)))
    call = blas_call.derive_call(a, b)
    wrong = blas_call.BlasCall("dgemm", "N", "N", 6, 6, 6, 6, 6, ())
    assert call.trans_b == "T"
    assert not np.array_equal(blas_call.replay(wrong, a, b, LIBRARY), np.dot(a, b))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("requires_grad", [True, False])
def test_one_call_every_layout(layout, requires_grad):
    params = one_call.parse_params({"layout": layout, "requires_grad": requires_grad,
                                    "m": 17, "k": 9, "n": 12, "seed": 3})
    result = one_call.run(**params)
    assert result.passed and not not_passed(result), not_passed(result)


@pytest.mark.parametrize("grads", ["both", "a", "b"])
@pytest.mark.parametrize(("m", "k", "n"), [(2, 2, 2), (7, 3, 11)])
def test_backward_every_choice(grads, m, k, n):
    result = backward.run(**backward.parse_params({"grads": grads, "m": m, "k": k, "n": n}))
    assert result.passed and not not_passed(result), not_passed(result)


def test_intensity_and_roof():
    assert roof.intensity(12, 12, 12) == pytest.approx(1.0)  # n/12 for a square product
    thin_bytes = 8 * (4096 * 1024 + 1024 * 1 + 4096 * 1)
    assert roof.intensity(4096, 1024, 1) == pytest.approx(2 * 4096 * 1024 / thin_bytes)
    assert roof.roof(100.0, 10.0, 0.25) == 2.5
    assert roof.roof(100.0, 10.0, 50.0) == 100.0
