"""The Mode record and the registry every stage reads its modes from."""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Callable


def _no_args(spec, tables) -> str:
    return ""


def template_args(*pairs) -> str:
    """A kernel's template arguments after Op from (value, default) pairs, in order, those at
    their defaults left off the end: ", true, 2" or ""."""
    values = [v for v, _ in pairs]
    while values and values[-1] == pairs[len(values) - 1][1]:
        values.pop()
    return "".join(f", {str(v).lower()}" for v in values)


def short_form(spec, tables) -> bool:
    """Whether the kernel takes its functor's short form first (kernels.cuh run_packs kShort)."""
    return bool(tables.lookup("short_form", spec, False))


def _no_slots(spec, tables) -> int:
    return 0


@dataclass(frozen=True)
class Kernel:
    """How one backend runs a mode: the C++ template its entry point instantiates.

    Attributes
    ----------
    template : the template the entry point calls with `Op` first, as `template<Op...>(...)`:
        a header section's ("sw::cpu::rows_loop", "sw::cuda::rows_kernel") or one in `source`.
        A CPU loop takes the slot record; a CUDA kernel the record and its launch facts.
    header : the header that holds it, included by the entry point (None: none).
    source : C++ placed before the entry point: the template itself, for a mode whose kernel
        is not in the package's headers.
    args : (spec, tables) -> the template arguments after Op, with a leading ", " (CUDA: a
        tuning's kernel tables choose them).
    slots : (spec, tables) -> how many launch-fact slots the kernel reads after the Geometry.
    grid : CUDA: (spec, plan, alg, tables) -> (work, items, group, facts): the blocks of work
        (the grid before the waves cap), the items and group the Geometry carries, and the
        `slots` launch facts (uint64 each). None: the backend sizes nothing (CPU).
    """

    template: str
    header: str | None = None
    source: str = ""
    args: Callable = _no_args
    slots: Callable = _no_slots
    grid: Callable | None = None


def in_headers(name: str, *, args: Callable = _no_args, slots: Callable = _no_slots,
               grid: Callable) -> dict:
    """The kernels of a mode whose loops are sections of the package's headers: the CPU's
    `sw::cpu::<name>_loop` (cpu/loops.h), CUDA's `sw::cuda::<name>_kernel` (cuda/kernels.cuh)."""
    return {"cpu": Kernel(f"sw::cpu::{name}_loop", "stridewise/cpu/loops.h"),
            "cuda": Kernel(f"sw::cuda::{name}_kernel", "stridewise/cuda/kernels.cuh", args=args,
                           slots=slots, grid=grid)}


@dataclass(frozen=True)
class Mode:
    """One way of walking a planned problem, and everything each stage needs to run it.

    Attributes
    ----------
    name : the mode's name: `Plan.mode`, `explain`, tunings' per-mode keys, entry points.
    algorithm : the Algorithm subclass that selects it explicitly (its `mode` is `name`).
    rank : Auto tries the registered modes by ascending rank and runs the first that
        `applies` to the plan and `prefers` it.
    applies : (plan) -> whether the mode can run the plan at all; an explicit algorithm
        whose mode does not apply is rejected.
    kind : (plan, k, share_rows) -> how array operand k is read, for an operand that is not
        "uniform" (one element: every mode reads those once); see _plan.Layout.
    pack : (plan, kinds, cap) -> (pack, aux): the widest pack at most `cap` the operands'
        alignment allows, and the mode's aux slot value (a flat head, a tile dim, a row-peel
        flag). It may mark a dense input "shifted" in `kinds` (a list).
    prefers : (plan, tuning) -> whether Auto runs it where it applies, with the backend's
        ElementwiseTuning (None: the defaults) (default: always).
    row_heads : `aux` says the rows peel their heads (compiled in as Op::kRowHeads).
    periods : the operand kinds whose period (Plan._period) the record's period slots carry.
    shares : (plan, tuning) -> the share_rows Auto fills in for the mode's algorithm, with the
        tuning as the mode sees it (None: resolve's rule for row vectors).
    kernels : backend name -> Kernel; a backend without one cannot run the mode.
    example : (new) -> the inputs of a problem the mode runs with its algorithm, `new(shape)`
        making a dense array (of any library and dtype): the tests run every registered
        mode's example on each backend against an oracle.
    """

    name: str
    algorithm: type
    rank: int
    applies: Callable
    kind: Callable
    pack: Callable
    prefers: Callable | None = None
    row_heads: bool = False
    periods: tuple = ("periodic",)
    shares: Callable | None = None
    kernels: dict = field(default_factory=dict)
    example: Callable | None = None

    def __post_init__(self):
        if getattr(self.algorithm, "mode", None) != self.name:
            raise ValueError(f"mode {self.name!r}: its algorithm {self.algorithm.__name__} has "
                             f"mode {getattr(self.algorithm, 'mode', None)!r}; set "
                             f"{self.algorithm.__name__}.mode = {self.name!r}")

    def picks(self, plan, tuning=None) -> bool:
        """Whether Auto runs this mode for `plan` (ignoring modes ranked before it)."""
        return self.applies(plan) and (self.prefers is None or self.prefers(plan, tuning))

    def kernel(self, backend: str) -> Kernel:
        k = self.kernels.get(backend)
        if k is None:
            raise ValueError(f"mode {self.name!r} has no {backend} kernel; use another algorithm")
        return k


_MODES: dict[str, Mode] = {}


def register(mode: Mode) -> Mode:
    """Add `mode` (a name not yet registered); calls prepared before forget their plans."""
    if mode.name in _MODES:
        raise ValueError(f"a mode named {mode.name!r} is already registered; unregister it first")
    _MODES[mode.name] = mode
    _forget_prepared()
    return mode


def unregister(name: str) -> Mode:
    """Remove the mode `name`; calls prepared with it forget their plans."""
    mode = get(name)
    del _MODES[name]
    _forget_prepared()
    return mode


def get(name: str) -> Mode:
    mode = _MODES.get(name)
    if mode is None:
        raise ValueError(f"unknown mode {name!r}; modes are {', '.join(_MODES)}")
    return mode


def registered() -> tuple[Mode, ...]:
    """The registered modes, in registration order."""
    return tuple(_MODES.values())


def names() -> tuple[str, ...]:
    return tuple(_MODES)


def by_rank() -> list[Mode]:
    return sorted(_MODES.values(), key=lambda m: m.rank)


def auto(plan, tuning=None) -> str:
    """The mode Auto runs for `plan` with a backend's tuning (None: the defaults): the first
    by rank that applies and prefers it."""
    return next(m.name for m in by_rank() if m.picks(plan, tuning))


def fallback() -> str:
    """The mode a backend without the plan's own mode runs: the last by rank, which applies
    to every plan."""
    return by_rank()[-1].name


def runs_on(name: str, backend: str) -> bool:
    mode = _MODES.get(name)
    return mode is not None and backend in mode.kernels


def _forget_prepared() -> None:
    """Prepared calls hold a mode chosen under the old registry: drop them (the built-in
    ops' memos and every live user kernel's)."""
    ops = sys.modules.get("stridewise.launch.pipeline")
    for memo in (getattr(ops, "_MEMO", None), getattr(ops, "_CALLS", None)):
        if memo is not None:    # (absent while the package itself imports)
            memo.clear()
    kernel = sys.modules.get("stridewise.kernels.elementwise")
    if hasattr(kernel, "_LIVE"):
        for k in list(kernel._LIVE.values()):
            for kk in (k, k._ranged):
                if kk is not None:
                    kk._calls.clear()
                    kk._memo.clear()
