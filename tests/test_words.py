"""The word form of 1-byte packs (words.h Apply4): int8 and uint8 remainder, comparisons and
logical ops, and bool xor and logical ops, four lanes a 32-bit word on the GPU.

The remainder's argument is checked step by step in NumPy (test_small_int_div.py,
test_word_form_every_8bit_pair_in_every_lane). Here: which kernels take the word form, that
every layout of them compiles (NVRTC, packs of 16, 8, 4 and 1), and on the GPU every pair of
values in the layouts whose word inputs differ (a pack, a word built from strided elements,
a misaligned pack, one value along the pack, a divisor row prepared once per batch), against
NumPy; bool takes every pair of bytes, 0 and 1 or not (a uint8 array viewed as bool).
"""
import dataclasses

import numpy as np
import pytest

import stridewise as sw
from stridewise.codegen import words

BYTE_DTYPES = ("int8", "uint8")


def every_value(name):
    info = np.iinfo(name)
    return np.arange(info.min, info.max + 1, dtype=np.int64).astype(name)


def _spec(op, *args, alg=None):
    from stridewise.launch import pipeline as _ops
    from stridewise.ops.builtins import OPS

    return _ops._call(OPS[op], args, algorithm=alg, dry=True).spec


def _layouts(name):
    from stridewise import algorithms

    one = lambda *shape: np.ones(shape, name)          # noqa: E731
    share = algorithms.Rows(share_rows=True)
    return (((one(64, 256), one(64, 256)), None),                           # flat
            ((one(64, 256), one(256)), share),                              # a row shared
            ((one(64, 1), one(1, 256)), share),                             # an outer product
            ((one(64, 256), one(64, 1)), algorithms.Rows()),                # a column
            ((one(64, 256), one()), None),                                  # a scalar
            ((one(64, 257)[:, 1:], one(64, 257)[:, :-1]), algorithms.Rows()),   # misaligned
            ((one(64, 512)[:, ::2], one(256)), algorithms.Rows()),         # strided elements
            ((one(64, 512)[:, ::2], one(256, 64).T), algorithms.General()))    # no packs


def test_which_kernels_take_the_word_form():
    """1-byte operands and output of one dtype; never a cast on the way, a user kernel, or
    any wider dtype."""
    a8 = np.ones(64, np.int8)
    assert words.applies(_spec("remainder", a8, a8))
    assert words.applies(_spec("remainder", a8, 3))
    assert words.applies(_spec("bitwise_xor", a8 > 0, a8 > 0))
    assert words.applies(_spec("remainder", a8.view(np.uint8), a8.view(np.uint8)))
    assert not words.applies(_spec("remainder", a8, a8.astype(np.int16)))
    assert not words.applies(_spec("remainder", a8.astype(np.int16), a8.astype(np.int16)))
    assert words.applies(_spec("equal", a8, a8))                # a bool result of int8 operands
    assert words.applies(_spec("logical_and", a8 > 0, a8 > 0))
    assert not words.applies(_spec("less", a8, a8.astype(np.int16)))
    assert not words.applies(_spec("less", a8.astype(np.float32), a8.astype(np.float32)))


@pytest.mark.nvrtc
def test_word_form_variants_compile(monkeypatch):
    """int8 and uint8 remainder, comparisons and logical ops (the word form), fmod (none: the
    element form behind the same branch) and bool xor and or in every layout above, at packs
    of 16, 8, 4 and 1."""
    pytest.importorskip("cuda.core", reason="needs the cuda extra (cuda.core + NVRTC wheels)")
    from nvrtc_batch import FAST, compile_batched

    monkeypatch.setenv("STRIDEWISE_DISABLE_CACHE", "1")
    specs = []
    for name, ops in (("int8", ("remainder", "fmod", "less", "not_equal", "logical_and")),
                      ("uint8", ("remainder", "less_equal")), ("bool", ("bitwise_xor", "logical_or"))):
        for op in ops:
            for args, alg in _layouts(np.bool_ if name == "bool" else name):
                spec = _spec(op, *args, alg=alg)
                assert words.applies(spec) == (spec.mode != "general")
                for pack in ({1} if spec.mode == "general" else {16, 8, 4, 1}):
                    specs.append(dataclasses.replace(spec, pack=pack))
    assert compile_batched(specs, options=FAST) == len(specs) == 9 * (7 * 4 + 1)


def test_bool_xor_of_any_bytes_on_the_host():
    """A byte other than 0 and 1 is true, as NumPy reads a uint8 array viewed as bool."""
    v = np.arange(256, dtype=np.uint8)
    a, b = (x.ravel().copy().view(np.bool_) for x in np.meshgrid(v, v, indexing="ij"))
    want = (a.view(np.uint8) != 0) ^ (b.view(np.uint8) != 0)
    got = sw.bitwise_xor(a, b)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    np.testing.assert_array_equal(np.bitwise_xor(a, b).view(np.uint8), want.view(np.uint8))


COMPARES = ("less", "less_equal", "greater", "greater_equal", "equal", "not_equal")
LOGICAL = ("logical_and", "logical_or", "logical_xor")


def _word(x):
    """Four bytes a uint32 word, lane 0 lowest (a little-endian pack's words)."""
    x = x.reshape(-1, 4).astype(np.uint32)
    return x[:, 0] | x[:, 1] << 8 | x[:, 2] << 16 | x[:, 3] << 24


def _bytes(w):
    return np.stack([(w >> (8 * i)) & 0xFF for i in range(4)], 1).ravel()


@pytest.mark.parametrize("shuffle", [False, True])
def test_compare_and_logical_words_every_byte_pair_in_numpy(shuffle):
    """ops.h BytesOf and its Apply4 forms, step by step in uint32 words: every pair of bytes,
    in order and shuffled across the lanes of a word, against NumPy's int8 and uint8 ops."""
    H, L = np.uint32(0x80808080), np.uint32(0x7F7F7F7F)
    v = np.arange(256, dtype=np.uint8)
    a, b = (x.ravel() for x in np.meshgrid(v, v, indexing="ij"))
    if shuffle:
        p = np.random.default_rng(5).permutation(a.size)
        a, b = a[p], b[p]
    wa, wb = _word(a), _word(b)

    def less(x, y, signed):
        d = (x | H) - (y & L)
        return ((x & ~y) if signed else (~x & y)) | (~(x ^ y) & ~d)

    def nonzero(w):
        return (((w & L) + L) | w) & H

    def bools(top):
        return _bytes((top & H) >> 7).astype(bool)

    for name, signed in (("int8", True), ("uint8", False)):
        x, y = a.view(name), b.view(name)
        forms = {"less": less(wa, wb, signed), "greater": less(wb, wa, signed),
                 "less_equal": ~less(wb, wa, signed), "greater_equal": ~less(wa, wb, signed),
                 "equal": ~nonzero(wa ^ wb), "not_equal": nonzero(wa ^ wb),
                 "logical_and": nonzero(wa) & nonzero(wb), "logical_or": nonzero(wa | wb),
                 "logical_xor": nonzero(wa) ^ nonzero(wb)}
        for op, top in forms.items():
            np.testing.assert_array_equal(bools(top), getattr(np, op)(x, y), err_msg=f"{op} {name}")


# -- the GPU -----------------------------------------------------------------------------------

def _gpu_layouts(fn, ta, tb):
    """fn over all pairs (ta[i], tb[j]) -> [i, j] in each layout; yields (label, result)."""
    import torch

    n, m = ta.numel(), tb.numel()
    A = ta[:, None].expand(n, m).contiguous()
    B = tb[None, :].expand(n, m).contiguous()
    yield "flat", fn(A.ravel(), B.ravel()).view(n, m)
    yield "row", fn(A, tb)
    yield "outer", fn(ta[:, None], tb[None, :])
    yield "column", fn(A.t().contiguous(), tb[:, None]).t()                 # [j, i] -> [i, j]
    for off in (1, 2, 3):                                                    # packs off by 1-3 bytes
        wa = torch.empty(n * m + 8, dtype=ta.dtype, device="cuda")
        wb = torch.empty(n * m + 8, dtype=ta.dtype, device="cuda")
        wa[off:off + n * m] = A.ravel()
        wb[5 - off:5 - off + n * m] = B.ravel()
        yield f"misaligned {off}", fn(wa[off:off + n * m], wb[5 - off:5 - off + n * m]).view(n, m)
    wide = torch.zeros((n, 2 * m), dtype=ta.dtype, device="cuda")
    wide[:, ::2] = A
    yield "strided", fn(wide[:, ::2], B)
    yield "scalar", torch.stack([fn(ta, tb[j].item() if ta.dtype != torch.bool else bool(tb[j]))
                                 for j in range(0, m, 37)], 1)


@pytest.mark.gpu
@pytest.mark.parametrize("name", BYTE_DTYPES)
def test_remainder_every_8bit_pair_in_every_word_layout_on_the_gpu(name):
    import torch

    v = every_value(name)
    with np.errstate(all="ignore"):
        want = np.remainder(v[:, None], v[None, :])
    assert (want[:, v == 0] == 0).all()                                  # NumPy's x % 0
    t = torch.from_numpy(v).cuda()
    for label, got in _gpu_layouts(sw.remainder, t, t):
        assert got.dtype == t.dtype, label
        exp = want[:, ::37] if label == "scalar" else want
        np.testing.assert_array_equal(got.cpu().numpy(), exp, err_msg=label)


@pytest.mark.gpu
def test_bool_xor_every_byte_pair_in_every_word_layout_on_the_gpu():
    import torch

    v = np.arange(256, dtype=np.uint8)
    want = (v[:, None] != 0) ^ (v[None, :] != 0)
    t = torch.from_numpy(v).cuda().view(torch.bool)
    for label, got in _gpu_layouts(sw.bitwise_xor, t, t):
        assert got.dtype == torch.bool, label
        exp = want[:, ::37] if label == "scalar" else want
        np.testing.assert_array_equal(got.view(torch.uint8).cpu().numpy(), exp.astype(np.uint8),
                                      err_msg=label)
    ones = torch.from_numpy(v % 2 == 1).cuda()                            # 0/1 bytes: torch agrees
    assert torch.equal(sw.bitwise_xor(ones[:, None], ones[None, :]), ones[:, None] ^ ones[None, :])


@pytest.mark.gpu
@pytest.mark.parametrize("op, name", [(op, name) for name in BYTE_DTYPES for op in COMPARES + LOGICAL]
                         + [(op, "bool") for op in LOGICAL])
def test_compare_and_logical_every_byte_pair_in_every_word_layout_on_the_gpu(op, name):
    """Every pair of values (bool: of bytes, 0 and 1 or not) against NumPy's op of the same
    values (bool: of their truth, as NumPy reads a uint8 array viewed as bool)."""
    import torch

    v = np.arange(256, dtype=np.uint8) if name == "bool" else every_value(name)
    x = v != 0 if name == "bool" else v
    want = getattr(np, op)(x[:, None], x[None, :])
    t = torch.from_numpy(v).cuda()
    t = t.view(torch.bool) if name == "bool" else t
    fn = getattr(sw, op)
    for label, got in _gpu_layouts(fn, t, t):
        assert got.dtype == torch.bool, label
        exp = want[:, ::37] if label == "scalar" else want
        np.testing.assert_array_equal(got.view(torch.uint8).cpu().numpy(), exp.astype(np.uint8),
                                      err_msg=label)
