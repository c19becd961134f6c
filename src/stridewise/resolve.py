"""Resolve: turn the caller's algorithm into a complete, runnable one (AK's four steps).

_check_domain validates only the fields the caller set; _select picks a concrete algorithm
for Auto() with its fields unset; _fill takes each unset field from the tuning; _check
rejects what cannot run here. Explicit fields always win.
"""
from __future__ import annotations

import dataclasses

from stridewise import modes
from stridewise.algorithms import Algorithm, Auto
from stridewise.capabilities import Capabilities
from stridewise.tuning import ElementwiseTuning

__all__ = ["_resolve_elementwise", "_check_domain", "_select", "_fill", "_check"]


def _is_pow2(x: int) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x > 0 and x & (x - 1) == 0


def _check_domain(alg) -> None:
    """Reject out-of-domain values among the fields the caller set."""
    if not isinstance(alg, (Algorithm, Auto)):
        raise TypeError(f"algorithm must be Auto() or one of {', '.join(m.algorithm.__name__ for m in modes.registered())}; "
                        f"got {alg!r}")
    limits = {"block_size": (32, 1024), "pack": (1, 16), "items_per_thread": (1, 16), "tile": (8, 64),
              "tile_group": (1, 64)}
    for f in dataclasses.fields(alg):
        value = getattr(alg, f.name)
        if value is None:
            continue
        name = "Auto" if isinstance(alg, Auto) else alg.name
        if f.name in ("share_rows", "keep_loads", "stage", "hoist"):
            if not isinstance(value, bool):
                raise ValueError(f"{name}({f.name}={value!r}): {f.name} must be True or "
                                 f"False; pick one or leave it unset")
            continue
        lo, hi = limits[f.name]
        if not _is_pow2(value) or not lo <= value <= hi:
            raise ValueError(f"{name}({f.name}={value!r}): {f.name} must be a power of two "
                             f"from {lo} to {hi}; pick one or leave it unset")


def _select(plan, tuning: ElementwiseTuning, caps: Capabilities, auto: Auto = None) -> Algorithm:
    """For Auto(): the algorithm of the mode Auto picks with the backend's tuning (the
    fallback mode's where the backend has none), its fields left unset but those Auto sets
    (block_size)."""
    mode = modes.auto(plan, tuning)
    mode = mode if caps._supports_mode(mode) else modes.fallback()
    return modes.get(mode).algorithm(block_size=getattr(auto, "block_size", None))


def _shifts_row(plan, mode: str, tuning: ElementwiseTuning) -> bool:
    """Shared, a row vector would be read shifted (off the output's packs)."""
    cap = max(1, tuning.pack_bytes // max(plan.itemsizes))
    return "repeated_shifted" in plan.layout(mode, cap, True).kinds


def _fill(alg: Algorithm, tuning: ElementwiseTuning, plan, caps: Capabilities) -> Algorithm:
    """Fill unset fields that the backend reads from the tuning (as alg's mode sees it); set
    fields are kept."""
    tuning = tuning.for_mode(alg.mode)
    updates = {}
    for f in dataclasses.fields(alg):
        if getattr(alg, f.name) is not None or not caps._reads(f.name) or f.name == "hoist":
            continue
        if f.name == "pack":
            widest = max(plan.itemsizes)
            updates["pack"] = plan.layout(alg.mode, max(1, tuning.pack_bytes // widest)).pack
        elif f.name == "share_rows":   # measured to pay where the output is all the traffic
            updates["share_rows"] = tuning.share_rows and (
                plan.outer() or tuning.share_all_rows and plan.repeats_rows()) and (
                tuning.share_shifted_rows or not _shifts_row(plan, alg.mode, tuning))
        else:
            updates[f.name] = getattr(tuning, f.name)
    return dataclasses.replace(alg, **updates)


def _check_mode(alg: Algorithm, plan, caps: Capabilities) -> None:
    if not caps._supports_mode(alg.mode) or not plan.supports(alg.mode):
        raise ValueError(f"{alg.name}() cannot run this problem (merged shape {plan.shape}, "
                         f"strides {plan.strides}); its mode is {plan.mode!r}: use Auto() or "
                         f"{modes.get(plan.mode).algorithm.__name__}()")


def _check(alg: Algorithm, plan, caps: Capabilities, dtypes) -> None:
    """Reject a complete algorithm that cannot run this problem on this backend."""
    for dt in dtypes:
        if not caps._supports_dtype(dt.name):
            raise ValueError(f"the {caps.backend} backend does not compute in {dt.name}; "
                             f"cast to one of {', '.join(caps.dtypes)}")
    _check_mode(alg, plan, caps)
    if not caps._supports_block_size(alg.block_size):
        raise ValueError(f"{alg.name}(block_size={alg.block_size}) exceeds the {caps.backend} "
                         f"limit of {caps.max_block_size}; use a smaller block_size")
    widest = plan.layout(alg.mode).pack
    if alg.pack > widest or alg.pack * max(plan.itemsizes) > caps.max_pack_bytes:
        raise ValueError(f"{alg.name}(pack={alg.pack}) cannot run: the operands' alignment and "
                         f"dtypes allow at most pack={widest}; use pack<={widest} or leave it unset")
    try:   # the caller's fields passed this before _fill, so a failure is a tuning's value
        _check_domain(alg)
    except ValueError as e:
        raise ValueError(f"{e} (the value came from the registered tuning: fix that "
                         f"ElementwiseTuning, or set the field explicitly)") from None


def _resolve_elementwise(alg, plan, tuning: ElementwiseTuning, caps: Capabilities, dtypes) -> Algorithm:
    """The complete algorithm to run: check, select, fill, check."""
    _check_domain(alg)
    if isinstance(alg, Auto):
        alg = _select(plan, tuning, caps, alg)
    _check_mode(alg, plan, caps)     # before _fill, which lays the mode out
    alg = _fill(alg, tuning, plan, caps)
    _check(alg, plan, caps, dtypes)
    return alg
