"""short_rows: flat packs over a dense output; periodic operands gathered by index mod period.

For rows too short to fill a warp's packs, and for rows whose alignment leaves `rows` a
narrower pack than the flat walk. With share_rows, periodic operands of one common period are
resident instead ("repeated"): each thread reads them at one phase, once.
"""
from __future__ import annotations

import math

from stridewise.algorithms import ShortRows
from stridewise.modes import _flat
from stridewise.modes._mode import Mode, in_headers, register, template_args

def _applies(plan) -> bool:
    return plan.ndim >= 2 and plan._outputs_inner_unit() and all(
        plan._flat(k) for k in range(plan.nout)) and all(
        plan._uniform(k) or plan._flat(k) or plan._period(k)
        for k in range(plan.nout, len(plan.strides)))


def _prefers(plan, tuning) -> bool:
    """Rows shorter than the backend's short_row_bytes (tuning.py) go flat, and so do rows
    whose alignment leaves `rows` a narrower pack."""
    from stridewise.tuning import ElementwiseTuning

    limit = (tuning or ElementwiseTuning).short_row_bytes
    inner_bytes = plan.shape[-1] * max(plan.itemsizes)
    return inner_bytes < limit or plan.max_pack("rows") < plan.max_pack("short_rows")


def _kind(plan, k: int, share_rows: bool) -> str:
    """With share_rows a periodic operand is "repeated" (resident: read once per thread,
    kernels.cuh resident_kernel) where `_pack` finds its period allows it."""
    return "dense" if plan._flat(k) else "repeated" if share_rows else "periodic"


# A resident operand's phases repeat every period // gcd(period, pack) packs; the kernel walks
# packs with a stride of the grid's threads rounded down to a multiple of that, so it needs
# that many threads at least.
MAX_RESIDENT_PACKS = 1024


def resident_packs(period: int, pack: int) -> int:
    """Packs after which a resident operand's phases repeat (kernels.cuh resident_kernel):
    lcm(period, pack) elements."""
    return period // math.gcd(period, pack)


def _pack(plan, kinds: list, cap: int) -> tuple[int, int]:
    """_flat.pack with every periodic operand gathered; then those that asked to be resident
    stay "repeated" where each thread's packs meet one phase of one common period: the run
    starts on a pack (no head) and the period's phases repeat within MAX_RESIDENT_PACKS
    packs. The period need not be whole packs, nor the operand aligned: each thread reads
    its phase once, element by element where it must (pack.h load_wrapped)."""
    asked = [k for k, kind in enumerate(kinds) if kind == "repeated"]
    for k in asked:
        kinds[k] = "periodic"
    cap, head = _flat.pack(plan, kinds, cap)
    period = plan._period(asked[0]) if asked else 0
    if asked and len(asked) == kinds.count("periodic") and all(
            cap > 1 and head == 0 and plan._period(k) == period
            and resident_packs(period, cap) <= MAX_RESIDENT_PACKS for k in asked):
        for k in asked:
            kinds[k] = "repeated"
    return cap, head


def _fast_div(spec, tables) -> bool:
    """Whether the kernel takes i mod period as a multiply-high (kernels.cuh flat_offsets);
    a resident walk takes none."""
    from stridewise.backends.cuda import _fast_div
    return "periodic" in spec.kinds and _fast_div(spec, tables)


def _args(spec, tables) -> str:
    """i mod period as a multiply-high, the packs in flight (kernels.cuh run_packs L) and a
    flagged pack's exact form as a call (kOutline), each where a tuning says so."""
    from stridewise.backends.cuda import _LOADS

    return template_args((_fast_div(spec, tables), False),
                         (tables.lookup("loads", spec) or _LOADS, _LOADS),
                         (bool(tables.lookup("outline_exact", spec, False)), False))


def _slots(spec, tables) -> int:
    return 2 * spec.kinds.count("periodic") if _fast_div(spec, tables) else 0


def _grid(spec, plan, alg, tables) -> tuple:
    from stridewise.backends.cuda import _magic

    work, items, group, facts = _flat.grid(spec, plan, alg, tables)
    if "repeated" in spec.kinds:   # at least a period's packs of threads (resident_kernel)
        period = resident_packs(max(plan.layout("short_rows", spec.pack, True).periods), spec.pack)
        work = max(work, -(-period // alg.block_size))
    if _fast_div(spec, tables):
        periods = plan.layout("short_rows").periods
        facts = [x for kind, period in zip(spec.kinds, periods) if kind == "periodic"
                 for x in _magic(period, spec.index_bits)]
    return work, items, group, facts


MODE = register(Mode(
    "short_rows", ShortRows, rank=40,
    applies=_applies, prefers=_prefers, kind=_kind, pack=_pack,
    # a resident operand is read at one phase of its period per thread, wherever _pack allows
    periods=("periodic", "repeated"), shares=lambda plan, tuning: tuning.share_rows,
    example=lambda new: (new((1000, 6)), new((1, 6))),
    kernels=in_headers("short_rows", args=_args, slots=_slots, grid=_grid)))
