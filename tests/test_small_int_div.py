"""8- and 16-bit integer remainder, fmod and floor_divide on the GPU (small_int_div.h).

The device divides in float with one rcp.approx per divisor. Here: the exactness argument
step by step in NumPy (every 8-bit pair, every 16-bit divisor against the dividends next to
its multiples, the reciprocal 2 ulp either way), against NumPy's own integer ops; NVRTC
compiles every layout of the three ops in the four dtypes; and on the GPU, every pair in the
layouts the other tests leave out (flat 16-bit, a row divisor, a column divisor, a scalar).
"""
import dataclasses

import numpy as np
import pytest

import stridewise as sw

OPS = ("remainder", "fmod", "floor_divide")
SMALL = ("int8", "uint8", "int16", "uint16")
ONE_GRID = 0x4B400000          # bits of 1.5 * 2^23, where floats are 1 apart


def every_value(name):
    info = np.iinfo(name)
    return np.arange(info.min, info.max + 1, dtype=np.int64)


def numpy_op(op, a, b, name):
    """NumPy's own op in `name` (x % 0, x // 0 and fmod(x, 0) are 0; MIN // -1 wraps)."""
    with np.errstate(all="ignore"):
        return getattr(np, op)(a.astype(name), b.astype(name))


def rcp_approx(v, ulps):
    """rcp.approx.f32 of the integers v (as float64, exact), modelled as the correctly rounded
    float reciprocal moved `ulps` ulp away from zero (negative: toward it); the hardware is
    within 1 ulp."""
    r = (np.float32(1) / v.astype(np.float32)).astype(np.float32)
    for _ in range(abs(ulps)):
        r = np.nextafter(r, np.copysign(np.float32(np.inf if ulps > 0 else 0), r))
    return r.astype(np.float64)


def floor_product(x2, r):
    """floor(x2 / 2 * r), exactly, for integers x2 and floats r (as the fma computes it before
    its one rounding): r = m 2^e with an integer m < 2^24."""
    frac, ex = np.frexp(r)
    m = (frac * 2.0**24).astype(np.int64)
    shift = (1 - (ex - 24)).astype(np.int64)        # r <= 1, so shift >= 24
    assert (shift > 0).all() and (np.abs(x2) < 2**21).all()
    return (x2 * m) >> shift                         # arithmetic shift: floor


def device_model(op, a, b, name, ulps):
    """small_int_div.h step by step: the prepared divisor (SmallDivisor::make) and the
    division (small_int_div), in Python integers where the device has float bits."""
    signed = np.iinfo(name).min < 0
    a, b = np.broadcast_arrays(a.astype(np.int64), b.astype(np.int64))
    b1 = b if op == "floor_divide" else b + (b == 0)
    s = np.where(signed & (b1 < 0), -1, 1)
    floor, ceil = s, 2 * b1 - s                      # 2x - 2a: x = a + s / 2, a + b - s / 2
    if op == "fmod":
        k = np.where(a < 0, np.where(s > 0, ceil, floor), np.where(s < 0, ceil, floor))
    else:
        k = floor
    x2 = 2 * a + k                                   # 2x, exact on the 0.5 grid
    if op == "floor_divide":
        r = np.where(b == 0, 0.0, rcp_approx(np.where(b == 0, 1, b1), ulps))
        q = floor_product(x2, r)                     # the fma rounded down
        assert (np.abs(q) < 2**22).all()             # 1.5 2^23 + q stays in [2^23, 2^24)
        bits = ONE_GRID + q
    else:
        r = rcp_approx(-b1, ulps)
        c = -floor_product(-x2, r)                   # the fma rounded up
        assert (np.abs(c) < 2**22).all()
        bits = (a + (ONE_GRID + c) * b1) % 2**32     # u32 arithmetic
    width = 8 * np.dtype(name).itemsize
    return (bits % 2**width).astype(f"uint{width}").view(name)


@pytest.mark.parametrize("ulps", [-2, 0, 2])
@pytest.mark.parametrize("name", ["int8", "uint8"])
@pytest.mark.parametrize("op", OPS)
def test_device_argument_every_8bit_pair(op, name, ulps):
    a, b = every_value(name)[:, None], every_value(name)[None, :]
    np.testing.assert_array_equal(device_model(op, a, b, name, ulps), numpy_op(op, a, b, name))


@pytest.mark.parametrize("ulps", [-2, 2])
@pytest.mark.parametrize("name", ["int16", "uint16"])
@pytest.mark.parametrize("op", OPS)
def test_device_argument_16bit_near_multiples(op, name, ulps):
    """Every 16-bit divisor against the dividends closest to an integer quotient (its
    multiples and one either side, where x / b is 1 / (2|b|) from an integer) and the range's
    ends; the error bound grows with the quotient, so small divisors matter most."""
    info = np.iinfo(name)
    rng = np.random.default_rng(5)
    for lo in range(info.min, info.max + 1, 4096):
        b = np.arange(lo, min(lo + 4096, info.max + 1), dtype=np.int64)
        V = np.maximum(np.abs(b), 1)
        counts = (info.max - info.min) // V + 3
        bb = np.repeat(b, counts)
        start = np.repeat(np.cumsum(counts) - counts, counts)
        k = np.arange(bb.size) - start                     # 0 .. counts-1 per divisor
        mult = (info.min // np.repeat(V, counts) + k) * np.repeat(V, counts)
        for j in (-1, 0, 1):
            a = np.clip(mult + j, info.min, info.max)
            np.testing.assert_array_equal(device_model(op, a, bb, name, ulps),
                                          numpy_op(op, a, bb, name), err_msg=f"{op} {name} b in {lo}+")
        ends = np.array([info.min, info.min + 1, info.max - 1, info.max, 0, 1, -1])[:, None]
        ends = np.clip(np.concatenate([ends, rng.integers(info.min, info.max + 1, (64, 1))]),
                       info.min, info.max)
        np.testing.assert_array_equal(device_model(op, ends, b[None, :], name, ulps),
                                      numpy_op(op, ends, b[None, :], name))


# -- the word form: four 8-bit lanes a 32-bit word (small_int_div.h SmallRemainder4) ----------

def byte_perm(x, y, sel):
    """PTX prmt (default mode) on uint32 arrays: result byte i is byte (nibble i & 7) of the
    eight bytes y:x, or that byte's sign bit replicated where nibble i has bit 3 set."""
    src = (x.astype(np.uint64) | (y.astype(np.uint64) << 32))
    out = np.zeros(np.broadcast(x, y).shape, np.uint64)
    for i in range(4):
        n = (sel >> (4 * i)) & 0xF
        byte = (src >> np.uint64(8 * (n & 7))) & np.uint64(0xFF)
        if n & 8:
            byte = np.where(byte & np.uint64(0x80), np.uint64(0xFF), np.uint64(0))
        out |= byte << np.uint64(8 * i)
    return out.astype(np.uint32)


def as_float(bits):
    return np.asarray(bits, np.uint32).view(np.float32)


def ceil_fma_bits(x, r):
    """Bits of fma_ru(x, r, 1.5 2^23) for float32 x and r: 0x4b400000 + ceil(x r), the
    product exact in integers (24-bit mantissas), where the sum stays in [2^23, 2^24)."""
    fx, ex = np.frexp(x.astype(np.float64))
    fr, er = np.frexp(r.astype(np.float64))
    mx, mr = (fx * 2.0**24).astype(np.int64), (fr * 2.0**24).astype(np.int64)
    shift = 48 - (ex + er).astype(np.int64)               # x r = mx mr 2^-shift
    assert (shift > 0).all() and (shift < 63).all()
    c = -((-(mx * mr)) >> shift)                          # ceil
    assert (np.abs(c) < 2**22).all()
    return (ONE_GRID + c).astype(np.int64)


def exact_sub(x, y):
    """float32 x - y, asserted exact (the device's FADD on one grid)."""
    d = x - y
    assert (d.astype(np.float64) == x.astype(np.float64) - y.astype(np.float64)).all()
    return d


def word_model(name, wa, wb, ulps, splat=False):
    """SmallRemainder4::prepare and run step by step on uint32 words of four lanes; `splat`:
    x as for a dividend along the pack (x_of(Splat): the grid float of its byte 0, here lane
    k's byte, equal in a splat, less c per lane)."""
    wa, wb = np.broadcast_arrays(wa.astype(np.uint32), wb.astype(np.uint32))
    K2, G15 = np.float32(1.5 * 2**23), np.float32(1.5 * 2**15)
    t = []
    if name == "int8":
        nz = ((((wb & 0x7F7F7F7F).astype(np.uint64) + 0x7F7F7F7F) | wb) & 0x80808080).astype(np.uint32)
        b1 = ((wb.astype(np.uint64) + ((nz ^ 0x80808080) >> 7)) & 0xFFFFFFFF).astype(np.uint32)
        f = b1 ^ np.uint32(0x80808080)
        for k in range(4):
            fb = as_float(byte_perm(f, np.uint32(0x4B400000), 0x7650 | k))
            nb = exact_sub(K2 + np.float32(128), fb)
            ga = as_float(byte_perm(wa ^ np.uint32(0x80808080), np.uint32(0x47400080), 0x7604 | (k << 4)))
            # along the pack, c = bits 0x4740 80 B (the byte copied: __byte_perm drops the
            # selector's sign bit); from a word, x = a + 1/2 in every lane
            c = as_float(byte_perm(b1, np.uint32(0x47408000), 0x7650 + k)) if splat else G15 + np.float32(128)
            m = b1 if k == 0 else b1 & np.uint32(0xFF << (8 * k))
            t.append(_lane(wa, exact_sub(ga, c), nb, m, ulps, exact_powers=splat))
        v = byte_perm(byte_perm(t[0], t[1], 0x3250), byte_perm(t[2], t[3], 0x7210), 0x7610)
        if splat:
            return v
        e = v ^ b1                                   # bytes equal to b' set to 0 (sign mode)
        ne = ((((e & 0x7F7F7F7F).astype(np.uint64) + 0x7F7F7F7F) & 0xFFFFFFFF).astype(np.uint32)) | e
        return v & byte_perm(ne, np.uint32(0), 0xBA98)
    for k in range(4):
        g = K2 if k % 2 == 0 else G15
        fb = as_float(byte_perm(wb, np.uint32(0x4B400000), 0x7650 | k) if k % 2 == 0 else
                      byte_perm(wb, np.uint32(0x47400000), 0x7604 | (k << 4)))
        fb = np.maximum(fb, g + np.float32(1))
        nb = exact_sub(g, fb)
        x = exact_sub(as_float(byte_perm(wa, np.uint32(0x47400080), 0x7604 | (k << 4))), G15)
        t.append(_lane(wa if k < 2 else wa >> 16, x, nb, fb.view(np.uint32), ulps))
    return byte_perm(byte_perm(t[0], t[1], 0x3250), byte_perm(t[2], t[3], 0x3250), 0x5410)


def _lane(base, x, nb, m, ulps, exact_powers=False):
    """base + y m modulo 2^32, y the bits of fma_ru(x, rcp.approx(nb), 1.5 2^23);
    `exact_powers`: rcp.approx of a power of two taken as exact, as MUFU.RCP gives it (the
    form along the pack relies on it at b' = -128; its GPU tests of every pair check it)."""
    assert (np.abs(nb) >= 1).all() and (nb == np.round(nb)).all()
    n = nb.astype(np.int64)
    r = rcp_approx(n, ulps)
    if exact_powers:
        r = np.where((np.abs(n) & (np.abs(n) - 1)) == 0, 1.0 / n, r)
    r = r.astype(np.float32)
    y = ceil_fma_bits(x, r)
    return ((base.astype(np.int64) + y * m.astype(np.int64)) % 2**32).astype(np.uint32)


@pytest.mark.parametrize("splat", [False, True])
@pytest.mark.parametrize("ulps", [-2, 0, 2])
@pytest.mark.parametrize("name", ["int8", "uint8"])
def test_word_form_every_8bit_pair_in_every_lane(name, ulps, splat):
    """Every pair in each of a word's four lanes, the other lanes holding random pairs (so
    a carry or a stray byte from a neighbour shows), against NumPy's remainder per byte; with
    x taken as for a dividend word and as for one along the pack."""
    v = every_value(name).astype(name).view(np.uint8)
    a, b = (x.ravel() for x in np.meshgrid(v, v, indexing="ij"))
    rng = np.random.default_rng(7)
    for k in range(4):
        ba = rng.integers(0, 256, (a.size, 4), dtype=np.uint8)
        bb = rng.integers(0, 256, (a.size, 4), dtype=np.uint8)
        ba[:, k], bb[:, k] = a, b
        got = word_model(name, ba.view("<u4").ravel(), bb.view("<u4").ravel(), ulps, splat)
        want = numpy_op("remainder", ba.view(name), bb.view(name), name)
        np.testing.assert_array_equal(got.astype("<u4").view(name).reshape(-1, 4), want, err_msg=f"lane {k}")


# -- NVRTC: every layout compiles -----------------------------------------------------------

@pytest.mark.nvrtc
def test_small_int_division_variants_compile(monkeypatch):
    """remainder, fmod and floor_divide in int8, uint8, int16 and uint16: flat, a row divisor
    (prepared once per batch), an outer product, a column divisor, a scalar, strided, at
    the widest pack and pack 1."""
    pytest.importorskip("cuda.core", reason="needs the cuda extra (cuda.core + NVRTC wheels)")
    from nvrtc_batch import FAST, compile_batched
    from stridewise import algorithms
    from stridewise.launch import pipeline as _ops
    from stridewise.ops.builtins import OPS as TABLE

    monkeypatch.setenv("STRIDEWISE_DISABLE_CACHE", "1")
    specs = []
    for name in SMALL:
        one = lambda *shape: np.ones(shape, name)          # noqa: E731
        share = algorithms.Rows(share_rows=True)
        layouts = (((one(64, 256), one(64, 256)), None),
                   ((one(64, 256), one(256)), share),
                   ((one(64, 1), one(1, 256)), share),
                   ((one(64, 256), one(64, 1)), algorithms.Rows()),
                   ((one(64, 256), one()), None),
                   ((one(64, 512)[:, ::2], one(256, 64).T), algorithms.General()))
        for op in OPS:
            for args, alg in layouts:
                spec = _ops._call(TABLE[op], args, algorithm=alg, dry=True).spec
                wide = 1 if spec.mode == "general" else 16 // np.dtype(name).itemsize
                for pack, bits in ((wide, 32), (1, 64)):
                    specs.append(dataclasses.replace(spec, pack=pack, index_bits=bits))
    assert compile_batched(specs, options=FAST) == len(specs) == 4 * 3 * 6 * 2


# -- the GPU: every pair in the layouts test_int_dtypes leaves out ----------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("name", ["int16", "uint16"])
@pytest.mark.parametrize("op", OPS)
def test_every_16bit_pair_flat_on_the_gpu(op, name):
    """All 2^32 pairs as flat arrays (each element its own divisor, prepared per element),
    against NumPy's formula computed on the GPU in int32, in blocks of 4096 dividends."""
    import torch

    dt = getattr(torch, name)
    info = np.iinfo(name)
    b = torch.arange(info.min, info.max + 1, device="cuda", dtype=torch.int32)
    safe = torch.where(b == 0, torch.ones_like(b), b)
    for lo in range(info.min, info.max + 1, 4096):
        a = torch.arange(lo, lo + 4096, device="cuda", dtype=torch.int32)[:, None]
        q = torch.div(a, safe, rounding_mode="floor")
        want = {"floor_divide": q, "remainder": a - q * safe, "fmod": torch.fmod(a, safe)}[op]
        want = torch.where(b == 0, torch.zeros_like(want), want) & 0xFFFF
        fa, fb = (x.to(dt).contiguous().ravel() for x in torch.broadcast_tensors(a, b[None, :]))
        got = getattr(sw, op)(fa, fb)
        assert got.dtype == dt and got.shape == fa.shape
        assert torch.equal(got.view(want.shape).to(torch.int32) & 0xFFFF, want), (op, name, lo)


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["int8", "uint8"])
@pytest.mark.parametrize("op", OPS)
def test_every_8bit_pair_in_every_layout_on_the_gpu(op, name):
    """All 2^16 pairs with the divisor as a row shared by every row (prepared once per
    batch), as a column (one per row), as a 0-d tensor and as a Python int, and strided."""
    import torch

    v = every_value(name)
    want = numpy_op(op, v[:, None], v[None, :], name)            # want[i, j] = op(v[i], v[j])
    t = torch.from_numpy(v.astype(name)).cuda()
    n = t.numel()
    row = getattr(sw, op)(t[:, None].expand(n, n).contiguous(), t)
    np.testing.assert_array_equal(row.cpu().numpy(), want)
    col = getattr(sw, op)(t[None, :].expand(n, n).contiguous(), t[:, None])
    np.testing.assert_array_equal(col.cpu().numpy(), want.T)
    wide = torch.zeros((n, 2 * n), dtype=t.dtype, device="cuda")
    wide[:, ::2] = t[:, None]
    strided = getattr(sw, op)(wide[:, ::2], t[None, :].expand(n, n).t().contiguous().t())
    np.testing.assert_array_equal(strided.cpu().numpy(), want)
    for j in range(n):
        np.testing.assert_array_equal(getattr(sw, op)(t, t[j]).cpu().numpy(), want[:, j])
    for j in (0, 1, n // 2, n - 1):
        np.testing.assert_array_equal(getattr(sw, op)(t, int(v[j])).cpu().numpy(), want[:, j])
