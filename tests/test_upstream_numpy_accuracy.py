"""NumPy's accuracy validation sets for exp, log, sin, cos and tanh of float32 and float64
(tests/data/numpy_umath_validation.csv: upstream's inputs, their correctly rounded results and
NumPy's allowed ulp error per dtype), against stridewise's built-in ops on NumPy arrays: the
host's vector math (cpu/vmath.h) and its own routines meet NumPy's bounds; the own float64 exp,
sin and cos and the float32 log are also held to one ulp where the build has them."""
import csv
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

import stridewise as sw
from test_builtin_ops import ulp_diff
from test_vmath import builds_own_routines

OWN = {("exp", "float64"), ("sin", "float64"), ("cos", "float64"), ("log", "float32")}


def _sets():
    rows = defaultdict(list)
    with open(Path(__file__).parent / "data" / "numpy_umath_validation.csv") as f:
        for row in csv.DictReader(line for line in f if not line.startswith("#")):
            rows[row["func"], row["dtype"]].append((int(row["input"], 16), int(row["output"], 16),
                                                    int(row["ulp"])))
    return rows


SETS = _sets()


@pytest.mark.parametrize("func,dtype", sorted(SETS))
def test_validate_transcendentals(func, dtype):
    """numpy/_core/tests/test_umath_accuracy.py::TestAccuracy::test_validate_transcendentals:
    every row within NumPy's allowed ulp error (upstream's per-dtype bound), contiguous and
    as a strided view; the own routines within one ulp."""
    rows = SETS[func, dtype]
    bits = {"float32": np.uint32, "float64": np.uint64}[dtype]
    x = np.array([r[0] for r in rows], bits).view(dtype)
    want = np.array([r[1] for r in rows], bits).view(dtype)
    bound = max(r[2] for r in rows)
    got = getattr(sw, func)(x)
    assert got.dtype == x.dtype and ulp_diff(got, want) <= bound
    spaced = np.repeat(x, 3)[::3]                       # a strided view of the same inputs
    assert ulp_diff(getattr(sw, func)(spaced), want) <= bound
    if (func, dtype) in OWN and builds_own_routines():
        assert ulp_diff(got, want) <= 1
