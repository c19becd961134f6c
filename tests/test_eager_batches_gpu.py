"""Eager batches (kernels.cuh run_packs): a functor without a fast path (bool xor, add) loads
every pack of a batch and stores without branches, a pack out of range loading and storing the
batch's first pack again. On the GPU, in each mode that runs them and in shapes that leave
batches short (rows of a few packs, odd lengths, misaligned rows, a grid's last step), written
fresh and in place, against torch's own op bit for bit; a row of 2 packs per thread
(KernelTables.loads) in 8- and 16-bit types too."""
from __future__ import annotations

import zlib

import pytest
import torch

import stridewise as sw

pytestmark = pytest.mark.gpu

_BITS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _new(shape, dtype, gen):
    if dtype is torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool().cuda()
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=gen) * 100).to(dtype).cuda()
    return torch.randint(-128, 128, shape, generator=gen).to(dtype).cuda()


# layout -> (builder(new) -> operands, algorithm, the mode it must run in)
LAYOUTS = {
    "short_rows": (lambda new: (new((37, 16 * 5 + 3)), new((16 * 5 + 3,))), None, "short_rows"),
    "odd_rows": (lambda new: (new((37, 16 * 5 + 3)), new((16 * 5 + 3,))), sw.Rows(), "rows"),
    "short_rows_of_packs": (lambda new: (new((301, 48)), new((48,))), sw.Rows(), "rows"),
    "misaligned_rows": (lambda new: (new((65, 1027))[1:, 1:], new((1027,))[1:]), None, "rows"),
    "strided_rows": (lambda new: (new((33, 2 * 515))[:, ::2], new((33, 515))), None, "rows"),
    "contiguous": (lambda new: (new((16 * 4 * 128 * 3 + 17,)), new((16 * 4 * 128 * 3 + 17,))), None,
                   "contiguous"),
    "general": (lambda new: (new((40, 3 * 77))[:, ::3], new((77, 40)).T), sw.General(), "general"),
    "tiled": (lambda new: (new((96, 72)).T, new((72, 96))), sw.Tiled(), "tiled"),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("op,dtype", [("bitwise_xor", torch.bool), ("add", torch.float16),
                                      ("add", torch.bfloat16), ("add", torch.int8)])
@pytest.mark.parametrize("inplace", [False, True])
def test_eager_batches_match_torch(layout, op, dtype, inplace):
    build, alg, mode = LAYOUTS[layout]
    gen = torch.Generator().manual_seed(zlib.crc32(f"{layout} {op} {dtype}".encode()))
    a, b = build(lambda shape: _new(shape, dtype, gen))
    ours, theirs = getattr(sw, op), getattr(torch, op)
    assert sw.explain(ours, a, b, algorithm=alg).mode == mode
    want = theirs(a, b)
    if inplace:
        got = a.clone()
        assert ours(got, b, out=got, algorithm=alg) is got
    else:
        got = ours(a, b, algorithm=alg)
        assert got.stride() == want.stride()
    assert got.dtype == want.dtype and got.shape == want.shape
    bits = _BITS[got.element_size()]
    assert torch.equal(got.contiguous().view(bits), want.contiguous().view(bits)), (layout, op, dtype)
