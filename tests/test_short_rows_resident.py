"""short_rows' resident operands (ShortRows(share_rows=True)): a per-channel operand of a
channels_last tensor is read once per thread at one phase of its period (modes/short_rows.py,
kernels.cuh resident_kernel, pack.h load_wrapped) instead of gathered per pack, whether or
not the period is whole packs. Checked bit for bit, dtypes and strides included, against
NumPy on the host and torch on CUDA, in every element width, with periods that are and are
not whole packs (shorter than a pack too), and misaligned operands."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stridewise as sw
from oracle import NP, numpy_op, numpy_remainder, random_values, same_bits

RESIDENT = sw.ShortRows(share_rows=True)


def _channels_last(rng, dtype, n, h, w, c, offset=0):
    """An NxCxHxW view whose memory is NxHxWxC, starting `offset` elements into its buffer."""
    buf = random_values(rng, dtype, (offset + n * h * w * c,))
    return buf[offset:].reshape(n, h, w, c).transpose(0, 3, 1, 2)


def _channel(rng, dtype, c, offset=0):
    """A 1xCx1x1 operand, `offset` elements into its buffer; integer zeros made 3."""
    b = random_values(rng, dtype, (offset + c,))[offset:]
    if NP[dtype].kind in "iu":
        b[b == 0] = 3
    return b.reshape(1, c, 1, 1)


def _resident_expected(dtype, c, out_aligned=True) -> bool:
    """The rule, from the operands alone: 16-byte packs of more than one element, the
    output starting on a pack, and the period's phases repeating within 1024 packs
    (lcm(C, pack) elements), wherever the divisor starts."""
    pack = 16 // NP[dtype].itemsize
    return pack > 1 and c // math.gcd(c, pack) <= 1024 and out_aligned


def _check(a, b, want, alg=RESIDENT, op=sw.remainder, out=None):
    got = op(a, b, algorithm=alg, out=out)
    assert got.dtype == want.dtype
    parts = (np.real, np.imag) if got.dtype.kind == "c" else (np.asarray,)
    assert all(same_bits(np.ascontiguousarray(f(got)), np.ascontiguousarray(f(want))) for f in parts)
    if out is None:   # NumPy's order='K': the output keeps the channels_last layout
        assert got.strides == want.strides, (got.strides, want.strides)
    return got


@pytest.mark.parametrize("dtype", ["int8", "float16", "float32", "int64"])
@pytest.mark.parametrize("c", [3, 64, 96, 130])
def test_host_matches_numpy(dtype, c):
    """Every element width, small and larger N*H*W; resident (explain says "repeated") with
    periods of whole packs and not (3 and 130 channels), gathered without share_rows."""
    rng = np.random.default_rng(c)
    b = _channel(rng, dtype, c)
    for n, h, w in ((1, 1, 2), (2, 3, 5), (2, 33, 65)):
        a = _channels_last(rng, dtype, n, h, w, c)
        kind = sw.explain(sw.remainder, a, b, algorithm=RESIDENT).kinds[2]
        assert kind == ("repeated" if _resident_expected(dtype, c) else "periodic"), (n, h, w)
        _check(a, b, numpy_remainder(a, b))
        assert sw.explain(sw.remainder, a, b, algorithm=sw.ShortRows()).kinds[2] == "periodic"


@pytest.mark.parametrize("dtype, c", [("int8", 1023), ("int8", 1025), ("float16", 2050),
                                      ("float16", 2048), ("float32", 1025)])
def test_host_resident_limit(dtype, c):
    """Phases repeating within 1024 packs stay resident (int8's 1023 channels: 1023 packs);
    past it they are gathered (1025 channels, or float16's 2050: 1025 packs); both exact."""
    rng = np.random.default_rng(c)
    a, b = _channels_last(rng, dtype, 1, 2, 3, c), _channel(rng, dtype, c)
    kind = sw.explain(sw.remainder, a, b, algorithm=RESIDENT).kinds[2]
    assert kind == ("repeated" if c in (1023, 2048) else "periodic")
    assert _resident_expected(dtype, c) == (kind == "repeated")
    _check(a, b, numpy_remainder(a, b))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_host_complex(dtype):
    """multiply by a per-channel complex operand: complex64 resident (two a pack), complex128
    (one a pack) gathered."""
    rng = np.random.default_rng(5)
    a = _channels_last(rng, dtype, 2, 7, 9, 64) * (1 + 2j)
    b = _channel(rng, dtype, 64) * (3 - 1j)
    kind = sw.explain(sw.multiply, a, b, algorithm=RESIDENT).kinds[2]
    assert kind == ("repeated" if dtype == "complex64" else "periodic")
    _check(a, b, numpy_op(np.multiply, a, b), op=sw.multiply)


@pytest.mark.parametrize("dtype", ["int16", "float32"])
def test_host_misaligned_operands(dtype):
    """A dividend off the output's packs (read shifted), or a divisor off its own, keeps the
    divisor resident (read element by element once); an output that starts off a pack (out=)
    is gathered."""
    rng = np.random.default_rng(7)
    c = 64
    for a_off, b_off in ((0, 0), (1, 0), (3, 0), (0, 1), (1, 2)):
        a = _channels_last(rng, dtype, 2, 5, 7, c, a_off)
        b = _channel(rng, dtype, c, b_off)
        kind = sw.explain(sw.remainder, a, b, algorithm=RESIDENT).kinds[2]
        assert kind == ("repeated" if _resident_expected(dtype, c) else "periodic"), (a_off, b_off)
        _check(a, b, numpy_remainder(a, b))
    a, b = _channels_last(rng, dtype, 2, 5, 7, c), _channel(rng, dtype, c)
    buf = np.zeros(1 + a.size, NP[dtype])
    out = buf[1:].reshape(2, 5, 7, c).transpose(0, 3, 1, 2)
    assert sw.explain(sw.remainder, a, b, algorithm=RESIDENT, out=out).kinds[2] == "periodic"
    assert _check(a, b, numpy_remainder(a, b), out=out) is out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 3), h=st.integers(1, 9), w=st.integers(1, 9),
       c=st.sampled_from([2, 3, 4, 5, 6, 8, 12, 16, 24, 40, 64, 130]), a_off=st.integers(0, 3),
       b_off=st.sampled_from([0, 4, 1]), seed=st.integers(0, 2**32 - 1))
def test_host_hypothesis(n, h, w, c, a_off, b_off, seed):
    """Shapes, periods and offsets drawn; float32 (4 a pack)."""
    rng = np.random.default_rng(seed)
    a = _channels_last(rng, "float32", n, h, w, c, a_off)
    b = _channel(rng, "float32", c, b_off)
    alg = RESIDENT if n * h * w > 1 else sw.Auto()   # one position: a single merged dim
    if n * h * w > 1:
        kind = sw.explain(sw.remainder, a, b, algorithm=alg).kinds[2]
        assert kind == ("repeated" if _resident_expected("float32", c) else "periodic")
    _check(a, b, numpy_remainder(a, b), alg)


def test_host_user_kernel_two_resident_operands():
    """A user kernel with two per-channel operands of one period (both resident, no prepared
    form), against NumPy; beside an operand of another period (per W and C) they are all
    gathered."""
    k = sw.ElementwiseKernel("T x, T s, T t", "T z", "z = x - s + t")   # no product to contract
    rng = np.random.default_rng(9)
    n, h, w, c = 2, 5, 6, 32
    x = _channels_last(rng, "float64", n, h, w, c)
    per_w = random_values(rng, "float64", (1, 1, w, c)).transpose(0, 3, 1, 2)   # period W * C
    for t, kinds in ((_channel(rng, "float64", c), ("repeated", "repeated")),
                     (per_w, ("periodic", "periodic"))):
        s_ = _channel(rng, "float64", c)
        z = np.empty((n, h, w, c)).transpose(0, 3, 1, 2)
        assert k._explain((x, s_, t), {"algorithm": RESIDENT, "out": z}).spec.kinds[2:] == kinds
        assert k(x, s_, t, z, algorithm=RESIDENT) is z
        assert same_bits(z, (x - s_) + t)


def test_auto_on_the_host_gathers():
    """The host's tuning leaves share_rows off (its short_rows loop gains nothing from it)."""
    a, b = np.ones((4, 8, 2, 2), np.float32), np.ones((1, 8, 1, 1), np.float32)
    a = np.ascontiguousarray(a.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    assert sw.explain(sw.remainder, a, b, algorithm=sw.ShortRows()).kinds[2] == "periodic"


# -- CUDA --------------------------------------------------------------------------------
GPU_DTYPES = ("float16", "bfloat16", "float32", "float64", "int32", "int64", "int8", "uint8",
              "int16")


def _torch_pair(rng, dtype, n, h, w, c, a_off=0, b_off=0):
    import torch

    from test_cuda import tt
    a = tt(random_values(rng, dtype, (a_off + n * h * w * c,)))[a_off:].view(n, h, w, c).permute(0, 3, 1, 2)
    b = tt(_channel(rng, dtype, c + b_off).reshape(-1))[b_off:].view(1, c, 1, 1)
    assert a.is_contiguous(memory_format=torch.channels_last) or c == 1 or h * w == 1
    return a, b


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", GPU_DTYPES)
def test_cuda_channels_last_bias(dtype):
    """Auto on CUDA: channels 1, 3, 64, 96 and 130, small and large N*H*W, and misaligned
    operands, against torch.remainder; the output keeps torch's channels_last strides.
    Resident where the dtype's tuning shares (tuning.py); where it gathers, the resident
    kernel runs too, explicitly."""
    import torch

    from test_cuda import host, torch_oracle
    shares = sw.elementwise_tuning("cuda", None, dtype).for_mode("short_rows").share_rows
    rng = np.random.default_rng(21)
    for c in (1, 3, 64, 96, 130):
        for (n, h, w), a_off, b_off in (((2, 3, 5), 0, 0), ((4, 56, 56), 0, 0),
                                        ((3, 17, 19), 1, 0), ((3, 17, 19), 0, 1)):
            a, b = _torch_pair(rng, dtype, n, h, w, c, a_off, b_off)
            e = sw.explain(sw.remainder, a, b)
            resident = c > 1 and e.mode == "short_rows" and _resident_expected(dtype, c)
            if c > 1 and e.mode == "short_rows":
                assert e.kinds[2] == ("repeated" if shares and resident else "periodic"), (c, n)
            got, want = sw.remainder(a, b), torch_oracle(a, b)
            assert same_bits(host(got), host(want)), (dtype, c, n, h, w, a_off, b_off)
            if resident and not shares:   # the resident kernel where Auto gathers
                assert sw.explain(sw.remainder, a, b, algorithm=RESIDENT).kinds[2] == "repeated"
                assert same_bits(host(sw.remainder(a, b, algorithm=RESIDENT)), host(want)), (c, n)
            # strides: torch.remainder's own (the oracle's integer fix-up may lay out anew)
            layout = torch.remainder(a, b)
            assert got.dtype == layout.dtype and got.stride() == layout.stride(), (c, n, got.stride())


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "float32", "int64"])
def test_cuda_grids_smaller_than_a_period(dtype, monkeypatch):
    """A grid of fewer threads than the period has packs (a device of one small SM; never
    from the real sizes) walks each pack at its own phase, and still matches torch, with a
    period of whole packs and one that is not."""
    from stridewise.backends import cuda
    from stridewise.launch import pipeline as _ops
    from test_cuda import host, torch_oracle

    ctx = cuda._device_facts(0)[2]
    monkeypatch.setattr(cuda, "_device_facts", lambda index: (1, 32, ctx))
    _ops._MEMO.clear()
    _ops._CALLS.clear()
    try:
        for c in (1024, 1022):   # whole packs, and 511 or 1022 packs before the phases repeat
            a, b = _torch_pair(np.random.default_rng(3), dtype, 2, 9, 11, c)
            alg = sw.ShortRows(share_rows=True, block_size=32)
            assert sw.explain(sw.remainder, a, b, algorithm=alg).kinds[2] == "repeated"
            got = sw.remainder(a, b, algorithm=alg)
            assert same_bits(host(got), host(torch_oracle(a, b))), c
    finally:
        _ops._MEMO.clear()
        _ops._CALLS.clear()


@pytest.mark.nvrtc
def test_resident_variants_compile(monkeypatch):
    """The resident kernel in every dtype at its widest pack and at pack 2, both index widths,
    and complex multiply: batched programs (tests/test_nvrtc.py's machinery)."""
    import dataclasses

    from nvrtc_batch import FAST, compile_batched
    from stridewise.launch import pipeline as _ops
    from stridewise.ops import builtins as _builtins
    from stridewise.operands.dtypes import ALL_DTYPES

    monkeypatch.setenv("STRIDEWISE_DISABLE_CACHE", "1")
    f = np.float32
    base = _ops._call(_builtins.OPS["remainder"], (np.ones((100, 64), f), np.ones((1, 64), f)),
                      algorithm=RESIDENT, dry=True).spec
    assert base.kinds == ("dense", "dense", "repeated")
    specs = []
    for name in GPU_DTYPES + ("uint16", "uint32", "uint64", "complex64"):
        dt = ALL_DTYPES[name]
        op = _builtins.OPS["multiply" if name.startswith("complex") else "remainder"]
        for pack, bits in ((16 // dt.itemsize, 32), (2, 64)):
            specs.append(dataclasses.replace(
                base, arrays=(dt,) * 3, compute=dt, functor=op.functor_for(dt, "torch"),
                pack=pack, index_bits=bits, keep_loads=bits == 32))
    # a user kernel's two resident operands, without a prepared form
    k = sw.ElementwiseKernel("T x, T s, T t", "T z", "z = x - s + t")
    x = np.ones((2, 4, 4, 32), np.float32).transpose(0, 3, 1, 2)
    ch = np.ones((1, 32, 1, 1), np.float32)
    user = k._explain((x, ch, ch + 1), {"algorithm": RESIDENT, "out": np.empty_like(x)}).spec
    assert user.kinds[2:] == ("repeated", "repeated")
    specs.append(user)
    assert compile_batched(specs, options=FAST) == len(specs)
