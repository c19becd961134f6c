"""bfloat16 fmod and floor_divide through remainder's table (bf16_ops.h), against NumPy's
ufuncs in float32, rounded once (oracle.numpy_op). torch's CPU fmod is no oracle here: it
gives NaN for finite dividends by subnormal divisors (its vector loop divides first)."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stridewise as sw
from oracle import NP, mismatches, numpy_op, same_bits

# Every subnormal divisor, the smallest normal ones, the largest and the specials (both signs),
# and every 193rd: the divisors that send a dividend past the host's double fast path
# (quotients of 2^50 and more) to the table, and a spread of the rest.
_BITS = np.r_[0:0x100, 0x7E00:0x8000, 0:0x8000:193].astype(np.uint16)
_DIVISORS = np.concatenate([_BITS, _BITS | np.uint16(0x8000)]).view(NP["bfloat16"])[:, None]
_EVERY = np.arange(65536, dtype=np.uint16).view(NP["bfloat16"])[None, :]


@pytest.mark.parametrize("op", ["fmod", "floor_divide"])
def test_every_bfloat16_dividend_by_the_table_divisors(op):
    """Every bfloat16 dividend (both signs, subnormals, inf, NaN) by the divisors above: the
    fast path and the table's packs, which differ in most rows, against NumPy's ufunc."""
    for start in range(0, _DIVISORS.shape[0], 256):
        b = _DIVISORS[start:start + 256]
        got = getattr(sw, op)(_EVERY, b)
        want = numpy_op(getattr(np, op), _EVERY, b)
        assert same_bits(got, want), (op, mismatches(got, want, *np.broadcast_arrays(_EVERY, b)))


def test_torch_float_number_divides_a_bfloat16_tensor_in_float():
    """torch reads a Python float divisor of a bfloat16 tensor's floor_divide in float32,
    unrounded (pipeline.py torch_numbers): 0.3 is not a bfloat16 value, so the table, which
    needs 8 significant bits, must not see it. Quotients past 2^50 reach the exact form."""
    torch = pytest.importorskip("torch")
    a = torch.tensor([1e30, -3e33, 7e20, 1.5, -2.0e38, 3.0e-39, 65280.0], dtype=torch.bfloat16)
    for b in (0.3, -0.7, 1e-7, 3.1e-41):
        got, want = sw.floor_divide(a, b), torch.floor_divide(a, b)
        assert got.dtype == want.dtype and torch.equal(got.view(torch.int16), want.view(torch.int16)), (b, got, want)


@pytest.mark.nvrtc
def test_bfloat16_fmod_compiles_remainders_checks_and_floor_divide_keeps_floats():
    """bfloat16 fmod's kernels (every mode) take remainder's range check first, two lanes at a
    time where the operands are dense 16-bit packs (bf16_ops.h's Wide2), and compile for sm_90;
    floor_divide keeps float's functor on the device, and every other dtype's fmod is
    FmodFunctor of its OpMath type."""
    pytest.importorskip("cuda.core")
    import dataclasses

    from nvrtc_batch import FAST, compile_batched
    from stridewise.backends import cuda
    from stridewise.codegen import source as codegen
    from stridewise.ops import builtins
    from stridewise.operands.dtypes import DTYPES
    from test_nvrtc import _base_specs

    dt = DTYPES["bfloat16"]
    fmod = builtins.OPS["fmod"].functor_for(dt, "torch")
    assert fmod == "sw::FmodOf<sw::bfloat16>"
    specs = []
    for name, spec in _base_specs().items():
        s = dataclasses.replace(spec, arrays=(dt,) * len(spec.arrays), params=(dt,) * len(spec.params),
                                compute=dt, functor=fmod, pack=1 if spec.mode == "general" else 8)
        src = codegen.generate(s, cuda.entry_point)
        if codegen._prepared(s) is None and not codegen._uniform_last(s) and codegen._pairs(s):
            assert "W2::wide(sw::pair(" in src, name
        specs.append(s)
    assert compile_batched(specs, options=FAST) == len(specs)
    probe = ('#include <stridewise/ops.h>\n'
             'template <class A, class B> struct Same { enum { value = 0 }; };\n'
             'template <class A> struct Same<A, A> { enum { value = 1 }; };\n'
             'static_assert(Same<sw::FloorDivideOf<sw::bfloat16>, sw::FloorDivideFunctor<float> >::value, "fd");\n'
             'static_assert(sw::Wide2<sw::FmodOf<sw::bfloat16>, sw::bfloat16>::value == 1, "wide2");\n'
             # torch's 16-bit floor_divide on the device: the quotient in float (EveryStep false)
             'static_assert(Same<sw::FloorDivideOf<sw::half, sw::kTorch>, sw::TorchFloorDivide16<sw::half, false> >::value, "t16");\n'
             '__device__ float torch_forms(float a, float b) {\n'
             '  return sw::FloorDivideOf<sw::bfloat16, sw::kTorch>()(a, b) + sw::TorchFloorDivideByNumber16<sw::half>()(a, b);\n}\n'
             + "".join(f'static_assert(Same<sw::FmodOf<{t}>, sw::FmodFunctor<{m}> >::value, "{t}");\n'
                       for t, m in (("sw::half", "float"), ("float", "float"), ("double", "double"),
                                    ("sw::i8", "sw::i8"), ("sw::i64", "sw::i64")))
             + 'extern "C" __global__ void probe(int* x) { x[0] = 1; }\n')
    assert cuda.compile(probe, "probe", "sm_90")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_hypothesis_bfloat16_bits_shapes_and_strides(data):
    """Any bfloat16 bit patterns, biased to the table's cases (subnormal and huge divisors,
    dividends near the maximum), in any broadcast shape and stride, through fmod and
    floor_divide against NumPy: a pack mixes fast and table lanes wherever they fall."""
    shape = data.draw(st.lists(st.integers(1, 9), min_size=1, max_size=3))
    hard = st.one_of(st.integers(0, 0xFFFF), st.integers(0, 0x80), st.integers(0x7E00, 0x7FFF),
                     st.integers(0x8000, 0x8080), st.integers(0xFE00, 0xFFFF))

    def draw_operand(bcast):
        full = [1 if bcast and data.draw(st.booleans()) else n for n in shape]
        step = data.draw(st.sampled_from([1, 2, -1]))
        big = [n * abs(step) for n in full]
        bits = np.array(data.draw(st.lists(hard, min_size=int(np.prod(big)), max_size=int(np.prod(big)))),
                        dtype=np.uint16).reshape(big)
        view = bits[(slice(None, None, step),) * len(big)] if step != 1 else bits
        return view.view(NP["bfloat16"])

    a, b = draw_operand(False), draw_operand(True)
    for op in ("fmod", "floor_divide"):
        got = getattr(sw, op)(a, b)
        want = numpy_op(getattr(np, op), a, b)
        assert same_bits(got, want), (op, mismatches(got, want, *np.broadcast_arrays(a, b)))
