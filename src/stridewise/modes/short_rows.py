"""short_rows: flat packs over a dense output; periodic operands gathered by index mod period.

For rows too short to fill a warp's packs, and for rows whose alignment leaves `rows` a
narrower pack than the flat walk.
"""
from __future__ import annotations

from stridewise.algorithms import ShortRows
from stridewise.modes import _flat
from stridewise.modes._mode import Mode, in_headers, register

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
    return "dense" if plan._flat(k) else "periodic"


def _fast_div(spec, tables) -> bool:
    """Whether the kernel takes i mod period as a multiply-high (kernels.cuh flat_offsets)."""
    from stridewise.backends.cuda import _fast_div
    return _fast_div(spec, tables)


def _args(spec, tables) -> str:
    return ", true" if _fast_div(spec, tables) else ""


def _slots(spec, tables) -> int:
    return 2 * spec.kinds.count("periodic") if _fast_div(spec, tables) else 0


def _grid(spec, plan, alg, tables) -> tuple:
    from stridewise.backends.cuda import _magic

    work, items, group, facts = _flat.grid(spec, plan, alg, tables)
    if _fast_div(spec, tables):
        periods = plan.layout("short_rows").periods
        facts = [x for kind, period in zip(spec.kinds, periods) if kind == "periodic"
                 for x in _magic(period, spec.index_bits)]
    return work, items, group, facts


MODE = register(Mode(
    "short_rows", ShortRows, rank=40,
    applies=_applies, prefers=_prefers, kind=_kind, pack=_flat.pack,
    example=lambda new: (new((1000, 6)), new((1, 6))),
    kernels=in_headers("short_rows", args=_args, slots=_slots, grid=_grid)))
