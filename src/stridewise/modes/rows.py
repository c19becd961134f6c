"""rows: unit-stride output rows; each operand's row offset is computed once per row."""
from __future__ import annotations

import math

from stridewise.algorithms import Rows
from stridewise.modes._mode import Mode, in_headers, register, short_form, template_args


def _kind(plan, k: int, share_rows: bool) -> str:
    if share_rows and plan._row_vector(k):
        return "repeated"
    return plan._inner_kind(k)


def _aligned(plan, cap: int) -> bool:
    """Every row of output 0 starts on a pack of `cap`."""
    return (plan.ptrs[0] // plan.itemsizes[0]) % cap == 0 and all(
        s % cap == 0 for d, s in enumerate(plan.strides[0][:-1]) if plan.shape[d] > 1)


def _pack(plan, kinds: list, cap: int) -> tuple[int, int]:
    """Each row is peeled to output 0's alignment (kernels.cuh rows_kernel), so a row stride
    or pointer off the pack costs nothing but the peel: (pack, 0 where no row peels a head,
    else the rows after which output 0's rows start at the same phase again: the spacing of
    a shared batch's rows, Layout.row_spacing)."""
    cap = plan._align_to_output(kinds, plan._dense(kinds), cap, range(plan.ndim - 1))
    if cap == 1 or _aligned(plan, cap):
        return cap, 0
    s = plan.strides[0][-2] if plan.ndim >= 2 and plan.shape[-2] > 1 else 0
    return cap, cap // math.gcd(s % cap, cap)


def _loads(spec, tables) -> int:
    """Packs in flight compiled into the kernel (kernels.cuh rows_kernel L)."""
    from stridewise.backends.cuda import _LOADS

    return tables.lookup("loads", spec) or _LOADS


def _args(spec, tables) -> str:
    """Batches through the fast path together (kernels.cuh run_packs kBatch), the packs in
    flight, and the functor's short form first (kShort), each where a tuning says so."""
    from stridewise.backends.cuda import _LOADS

    return template_args((bool(tables.lookup("batched", spec, False)), False),
                         (_loads(spec, tables), _LOADS), (short_form(spec, tables), False))


def _slots(spec, tables) -> int:
    return 10    # span, units, total, groups, then three (magic, shift) pairs


def _grid(spec, plan, alg, tables) -> tuple:
    """Work units as rows_kernel takes them: R rows of one slab of dim -2 where an operand
    is repeated (one column of rows shares it), else row parts of about a unit's packs."""
    from stridewise.backends.cuda import _magic

    k, block, items, pack = tables, alg.block_size, alg.items_per_thread, spec.pack
    length = plan.shape[-1]
    packs = length // pack
    r = _loads(spec, k) if any(kind.startswith("repeated") for kind in spec.kinds) else 1
    height = plan.shape[-2] if r > 1 else 1
    if r > 1:
        batches = k.row_unit_batches_outer.get(spec.compute.name, k.row_unit_batches) \
            if plan.outer() else k.row_unit_batches
        items, unit = min(items, batches), batches * r
    else:
        unit = k.row_unit_packs_outer if plan.outer() else k.row_unit_packs
    group = _group(packs, block, items)
    chunks = -(-packs // (group * items)) if packs else 1
    span = min(chunks, max(1, unit // (items * r)))
    units = -(-chunks // span)
    g = spec.row_spacing if r > 1 else 1   # kernels.cuh rows_kernel G
    per_slab = -(-height // (g * r)) * g
    total, groups = plan.n // length // height * per_slab * units, block // group
    bits = spec.index_bits
    facts = [span, units, total, groups, *_magic(units, bits), *_magic(per_slab, bits),
             *_magic(group, bits)]
    return -(-total // groups), items, group, facts


def _prefers(plan, tuning) -> bool:
    """Rows at least the backend's rows_min_bytes and rows_min_elements long (tuning.py), or an
    outer product's (a unit of work there is a column of rows sharing one row); other short
    rows, which short_rows (ranked before) did not take, run `general`. So does, where the
    tuning names a sector (the GPU's 32 bytes), a row that an input reads sparsely: each element
    in a sector of its own, or an eighth of each sector (8 elements and half a sector apart),
    where a pack's loads are as many as general's and general keeps more of them in flight;
    unless that input's next row starts one element on (a transpose) and the sectors are shared:
    a block holds several rows (its groups, a row each, read neighbouring elements of the same
    sectors), or the input is a broadcast small enough to stay in cache. A transpose's long
    rows, a block each, read each sector once per row (H100, 2^24, contiguous + channels_last, x
    torch eager, rows / general: float16 16 channels 0.49 / 1.05, 8 channels 0.75 / 1.10,
    float32 8 channels 0.52 / 0.96, float64 8 channels 0.82 / 1.02; broadcast over the batch,
    float64 8 channels 0.88 / 1.36; 4 channels of float64 or int64, 32 bytes apart, alike within
    4%; BENCHMARKS, fortieth stop)."""
    from stridewise.tuning import ElementwiseTuning
    t = tuning or ElementwiseTuning
    if plan.outer():
        return True
    n = plan.shape[-1]
    if n * max(plan.itemsizes) < t.rows_min_bytes or n < t.rows_min_elements:
        return False
    if not t.sector_bytes:
        return True

    def sparse(k: int) -> bool:
        step = abs(plan.strides[k][-1]) * plan.itemsizes[k]
        return step >= t.sector_bytes or (step >= 8 * plan.itemsizes[k] and 2 * step >= t.sector_bytes)

    def cached(k: int) -> bool:   # a broadcast whose elements fit in 64 KB
        st = plan.strides[k]
        return 0 in st and math.prod(e for s, e in zip(st, plan.shape) if s) * plan.itemsizes[k] <= 1 << 16

    spread = [k for k in range(plan.nout, len(plan.strides)) if sparse(k)]
    if not spread:
        return True
    shared = _rows_per_block(plan, t) > 1
    return all(plan.ndim > 1 and abs(plan.strides[k][-2]) == 1 and (shared or cached(k)) for k in spread)


def _group(packs: int, block: int, items: int) -> int:
    """Threads a row takes in rows_kernel: as many as its packs need, a power of two, but 8 at
    least (a 128-byte line of 16-byte packs): groups of a warp left most lanes idle in rows of
    a few packs (a 32-wide outer product 4x slower; BENCHMARKS)."""
    from stridewise.backends.cuda import _pow2_at_least

    return min(block, max(8, _pow2_at_least(-(-max(packs, 1) // items))))


def _rows_per_block(plan, t) -> int:
    """Rows a block of rows_kernel takes at once: its groups (_grid)."""
    pack = plan.layout("rows", max(1, t.pack_bytes // max(plan.itemsizes))).pack
    return t.block_size // _group(plan.shape[-1] // pack, t.block_size, t.items_per_thread)


MODE = register(Mode(
    "rows", Rows, rank=50,
    applies=lambda plan: plan._outputs_inner_unit(), prefers=_prefers,
    kind=_kind, pack=_pack, row_heads=True,
    example=lambda new: (new((64, 256)), new((256,))),
    kernels=in_headers("rows", args=_args, slots=_slots, grid=_grid)))
