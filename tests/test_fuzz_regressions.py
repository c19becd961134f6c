"""Bugs a differential fuzz against NumPy and torch found (tools/fuzz.py, tests/test_fuzz.py):
each case here is the input that showed it, checked against the library's own op."""
import numpy as np
import pytest

import stridewise as sw
from oracle import same_bits

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("a, b", [
    (torch.tensor([True, False]), torch.tensor([1, 2], dtype=torch.int8)),
    (torch.tensor([1, 2], dtype=torch.int32), torch.tensor(True)),
    (torch.tensor([1.0, 2.0]), True),
    (True, torch.tensor([1.0, 2.0])),
    (torch.tensor([True, False]), 1),
])
def test_torch_subtract_refuses_a_bool_operand_as_torch_does(a, b):
    """torch.sub raises on a bool tensor or a bool number on either side, even where the
    result dtype is not bool; stridewise computed int8 - bool and the like."""
    with pytest.raises(RuntimeError, match="bool"):
        torch.sub(a, b) if isinstance(a, torch.Tensor) else torch.rsub(b, a)
    out = torch.full((2,), 7.0)
    with pytest.raises(RuntimeError, match="logical_xor"):
        sw.subtract(a, b)
    with pytest.raises(RuntimeError, match="bool"):
        sw.subtract(a, b, out=out)
    assert torch.equal(out, torch.full((2,), 7.0))


def test_numpy_subtract_takes_bool_with_a_number_as_numpy_does():
    """NumPy refuses only bool - bool; bool with an integer promotes."""
    x = np.array([True, False, True])
    y = np.array([3, -4, 0], np.int8)
    assert same_bits(sw.subtract(x, y), np.subtract(x, y))
    assert same_bits(sw.subtract(y, x), np.subtract(y, x))
    with pytest.raises(TypeError):
        sw.subtract(x, x)
