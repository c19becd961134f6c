"""Tunings: the one home of every measured launch and kernel choice, keyed by device.

AcceleratedKernels' layering: each backend has defaults, a device can have its own tuning (a
registration or the file `stridewise tune` writes), and an explicit field of the caller's
algorithm always wins. A tuning is a plain frozen value; it can never make an invalid
algorithm run (`_resolve._check` rejects a bad value, naming the tuning). Every measured value
carries its Measurement: device, date, command and figure. docs/tuning.md explains the layers.
"""
from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass, field, replace

__all__ = ["ElementwiseTuning", "elementwise_tuning", "register_tuning", "Measurement",
           "KernelTables", "DeviceKey", "tuning_path", "load_tuning_file", "field_origins",
           "tuning_device"]

# A device as tunings know it: (name, arch), e.g. ("NVIDIA H200", "sm_90"). A registration
# names a device by name or by arch (or None: the backend's default for every device).
DeviceKey = tuple


@dataclass(frozen=True)
class Measurement:
    """What chose a value: the device it was measured on, when, with which command, and the
    figure that decided it."""

    device: str
    date: str
    command: str
    figure: str

    def __str__(self) -> str:
        return f"{self.device}, {self.date}, `{self.command}`: {self.figure}"


@dataclass
class KernelTables:
    """The CUDA kernels' compile-time and launch choices, per kernel.

    Tables are keyed by (mode, dtype, "outer"), (mode, dtype, "repeated"), (mode, dtype,
    "bcast"), (mode, dtype) or mode, most specific first (`lookup`); "repeated" is a rows
    kernel that shares a repeated row, "bcast" one with an operand broadcast along its rows (a
    column), "outer" one with both (an outer product).

    Attributes
    ----------
    max_registers : register cap (`__maxnreg__`); absent: uncapped.
    batched : rows kernels whose batches go through the fast path together (run_packs kBatch).
    tile_rows : rows per tile of the tiled kernel; absent: square tiles.
    loads : packs in flight compiled into the contiguous, rows and short_rows kernels
        (run_packs L); absent: kLoads (4).
    fast_div : short_rows takes i mod period as a multiply-high.
    short_form : rows kernels take the functor's short fast form first where a warp's lanes
        allow it (functors.h ShortForm, kernels.cuh run_packs kShort).
    outline_exact : a flagged pack's exact form runs as a call (functors.h call_exact,
        kernels.cuh run_packs kOutline), so its registers stay out of the fast path's. The
        tiled and short_rows kernels read it.
    row_unit_packs, row_unit_packs_outer : rows work unit in packs per thread (one row per
        unit; outer products that do not share their divisor row).
    row_unit_batches, row_unit_batches_outer : the unit in batches where rows share a repeated
        row (outer products: per dtype).
    """

    max_registers: dict = field(default_factory=dict)
    batched: dict = field(default_factory=dict)
    tile_rows: dict = field(default_factory=dict)
    loads: dict = field(default_factory=dict)
    fast_div: dict = field(default_factory=dict)
    short_form: dict = field(default_factory=dict)
    outline_exact: dict = field(default_factory=dict)
    row_unit_packs: int = 4
    row_unit_packs_outer: int = 16
    row_unit_batches: int = 2
    row_unit_batches_outer: dict = field(default_factory=dict)

    def lookup(self, table: str, spec, default=None):
        """spec's entry in `table`, most specific key first."""
        entries = getattr(self, table)
        key = (spec.mode, spec.compute.name)
        kinds = [kind for kind in ("repeated", "bcast")
                 if any(k.startswith(kind) for k in spec.kinds)]   # repeated_shifted too
        if len(kinds) == 2:     # a repeated row beside a broadcast operand: an outer product
            kinds.insert(0, "outer")
        keys = tuple((*key, kind) for kind in kinds)
        return next((entries[k] for k in (*keys, key, spec.mode) if k in entries), default)


@dataclass(frozen=True)
class ElementwiseTuning:
    """Defaults for the elementwise algorithms.

    Attributes
    ----------
    block_size, waves, pack_bytes : OneFlow's launch defaults (256 threads, 32 waves of
        resident blocks, 16-byte packs).
    items_per_thread : packs in flight per thread per step.
    tile, tile_group : tile edge and tiles per group along j for `Tiled`.
    share_rows : `Rows` reads a repeated row operand once per column of rows; applied to
        outer products (`Plan.outer`), where it measured faster.
    share_all_rows : with share_rows, also where a dense operand is read beside the row
        (a row broadcast, crossed 3-d).
    share_shifted_rows : Auto shares a row that starts off the output's packs (read shifted
        once per column of rows that peel alike: misaligned rows, odd row lengths); without
        it Auto leaves such a row unshared.
    keep_loads : dense operands read with an L2 evict_last policy (`Algorithm.keep_loads`).
    stage : `Tiled` copies its transposed operands' tiles into shared memory first.
    modes : (mode, field, value) overrides for one mode's algorithm (see `for_mode`).
    short_row_bytes : Auto runs rows shorter than this flat (`short_rows`, periodic operands
        gathered by index) where both modes apply: on the GPU a row under one warp of 16-byte
        packs leaves lanes idle; the host's rows loop pays per row only below 64 bytes.
    rows_min_bytes, rows_min_elements : Auto runs rows shorter than these `general` where
        `short_rows` does not apply (an operand neither flat nor periodic): on the GPU `rows`
        gives each row a group of at least 8 threads, so a row of a few packs leaves lanes
        idle; on the host its per-row set-up outweighs a few int64 elements. Outer products
        keep `rows` (0: rows of any length). `tiled` leaves rows shorter than
        rows_min_elements too.
    sector_bytes : the memory's transfer unit, where Auto runs `general` for rows an input
        reads sparsely (an element a sector, or an eighth of one), unless that input's next
        row starts one element on and the sectors are shared (modes/rows.py); 0: no such rule.
    tiled_alias_bytes : Auto runs a transpose in `tiled` only where each transposed input's
        step along the rows is a multiple of this many bytes, where a row's reads fall in a few
        cache sets and evict each other; at other steps the caches keep a row's lines until
        the next rows use them, and `rows` reads with no tile to fill (0: tiles at any step).
    tiled_min_fill : Auto leaves `tiled` where its tiles would be less full than this (the
        fraction of a tile's elements inside the output, along both tile dims): a tile dim
        shorter than the tile leaves most of each block idle (0: tiles at any fill). The next
        mode runs: `rows` on the host, `general` on the GPU where rows declines too.
    tiled_min_rows : the shortest tile along j Auto counts the fill against: 32, the shortest
        any dtype's tiles take, where the kernel's tiles keep their height (the host); lower
        where the kernel fits its tiles to a short tile dim (the GPU's halves them down to one
        pack, as many times wider: cuda/kernels.cuh) and such tiles measured ahead.
    hoist_work_per_byte, hoist_min_output : user kernels under Auto compute their
        broadcast-invariant subexpressions in a pre-pass (_hoist) where the operations that
        saves per output element are at least hoist_work_per_byte times the bytes the kernel
        moves per output element, and the output has hoist_min_output elements at least: a
        memory-bound kernel gains nothing from a cheap hoist and pays a second launch.
    source : where these numbers come from (device, date, command), or why they are defaults.
    evidence : (name, Measurement) pairs, name "field" or "mode.field": what chose each value.
    kernels : the CUDA kernels' tables (None on the CPU).
    tuned : the evidence names a device's own measurements set (the rest are inherited; empty
        in a device's registration: all of its evidence is its own).
    """

    block_size: int = 256
    waves: int = 32
    pack_bytes: int = 16
    items_per_thread: int = 2
    tile: int = 32
    tile_group: int = 1
    share_rows: bool = False
    share_all_rows: bool = False
    share_shifted_rows: bool = False
    keep_loads: bool = False
    stage: bool = False
    hoist_work_per_byte: float = 1.0
    hoist_min_output: int = 1 << 15
    short_row_bytes: int = 512
    rows_min_bytes: int = 0
    rows_min_elements: int = 0
    sector_bytes: int = 0
    tiled_min_fill: float = 0.0
    tiled_alias_bytes: int = 0
    tiled_min_rows: int = 32
    modes: tuple = ()
    source: str = "OneFlow elementwise.cuh defaults (block 256, 32 waves, 16-byte packs); not measured here"
    evidence: tuple = ()
    kernels: KernelTables | None = field(default=None, compare=False)
    tuned: tuple = ()

    def for_mode(self, mode: str) -> "ElementwiseTuning":
        """This tuning as `mode`'s algorithm sees it: its overrides in `modes` applied."""
        fields = {f: v for m, f, v in self.modes if m == mode}
        return replace(self, **fields) if fields else self

    def measurement(self, mode: str, name: str) -> Measurement | None:
        """What chose `name` for `mode`'s algorithm: a mode's own entry first."""
        found = dict(self.evidence)
        return found.get(f"{mode}.{name}", found.get(name))


_DEFAULT = ElementwiseTuning()
_REGISTRY: dict[tuple, ElementwiseTuning] = {}


def register_tuning(backend: str, device: str | None, tuning: ElementwiseTuning,
                    dtype: str | None = None) -> None:
    """Install `tuning` for a backend, a device (its name, its arch "sm_XY", or None for every
    device) and a dtype (None: any)."""
    _REGISTRY[(backend, device, dtype)] = tuning


def elementwise_tuning(backend: str, device: DeviceKey | str | None = None,
                       dtype: str | None = None) -> ElementwiseTuning:
    """The tuning for (backend, device, dtype): the device's name first, then its arch, then
    the backend's default; a dtype's own registration before the device's general one.

    A device given as (name, arch) also loads the file `stridewise tune` wrote for it, once.
    """
    return _find(backend, device, dtype)[1]


def tuning_device(backend: str, device: DeviceKey | str | None = None,
                  dtype: str | None = None) -> str | None:
    """The device name or arch whose registration elementwise_tuning picks (None: the
    backend's default)."""
    return _find(backend, device, dtype)[0]


def _find(backend, device, dtype):
    names = (device,) if isinstance(device, str) else tuple(device or ())
    if len(names) == 2 and (backend, names) not in _LOADED:
        _LOADED.add((backend, names))
        load_tuning_file(backend, names)
    for d in (*names, None):
        for dt in (dtype, None):
            if (backend, d, dt) in _REGISTRY:
                return d, _REGISTRY[(backend, d, dt)]
    return None, _DEFAULT


_LOADED: set = set()


# -- tuning files -----------------------------------------------------------------------
def tuning_path(backend: str, device: DeviceKey) -> str:
    """Where `stridewise tune` writes this device's tuning (STRIDEWISE_TUNING_DIR, default the
    kernel cache's directory / tunings)."""
    from stridewise import cache as _cache
    root = os.environ.get("STRIDEWISE_TUNING_DIR") or os.path.join(_cache.cache_dir(), "tunings")
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", "-".join((backend, *device))).strip("-")
    return os.path.join(root, slug + ".json")


_TUNABLE = {f.name for f in dataclasses.fields(ElementwiseTuning)} - {
    "modes", "source", "evidence", "kernels", "tuned"}


def load_tuning_file(backend: str, device: DeviceKey, path: str | None = None) -> int:
    """Register the tuning file of `device` (as `stridewise tune` writes it) on top of the
    tunings that hold without it; returns how many values it set (0: no file).

    Entries with an unknown field are skipped, never guessed; a value the algorithms cannot
    take is still rejected at its first call (`_resolve._check`), naming the tuning.
    """
    path = path or tuning_path(backend, device)
    try:
        with open(path) as f:
            import json   # only a process with a tuning file pays for json

            doc = json.load(f)
    except (OSError, ValueError):
        return 0
    name = device[0]
    per_dtype: dict = {}
    for e in doc.get("entries", ()):
        if e.get("field") in _TUNABLE:
            per_dtype.setdefault(e.get("dtype"), []).append(e)
    command = doc.get("command", "stridewise tune")
    for dtype, entries in per_dtype.items():
        base = elementwise_tuning(backend, device[1:], dtype)   # by arch, else the default
        modes, fields, evidence, tuned = list(base.modes), {}, list(base.evidence), []
        for e in entries:
            m = Measurement(f"{name} ({device[1]})", doc.get("date", "?"), command, e.get("figure", ""))
            if e.get("mode"):
                modes.append((e["mode"], e["field"], e["value"]))
                tuned.append(f"{e['mode']}.{e['field']}")
            else:
                fields[e["field"]] = e["value"]
                tuned.append(e["field"])
            evidence.append((tuned[-1], m))
        register_tuning(backend, name, replace(
            base, **fields, modes=tuple(modes), evidence=tuple(evidence), tuned=tuple(tuned),
            source=f"{path} ({command}, {doc.get('date', '?')}) over: {base.source}"), dtype)
    return sum(map(len, per_dtype.values()))


def field_origins(caller, resolved, tuning: ElementwiseTuning, device: str | None) -> tuple:
    """(field, value, origin) for each field of the resolved algorithm: "caller" where the
    caller set it, else "tuning for <device>" (`device`: the registration's, see
    tuning_device) or "default", with the measurement behind the value."""
    rows = []
    for f in dataclasses.fields(resolved):
        value = getattr(resolved, f.name)
        if value is None:
            continue
        if getattr(caller, f.name, None) is not None:
            rows.append((f.name, value, "caller"))
            continue
        source = {"pack": "pack_bytes"}.get(f.name, f.name)
        m = tuning.measurement(resolved.mode, source)
        own = not tuning.tuned or {f"{resolved.mode}.{source}", source} & set(tuning.tuned)
        where = f"tuning for {device}" if device and own else "default"
        rows.append((f.name, value, f"{where} ({m})" if m else where))
    return tuple(rows)


# -- the CUDA defaults --------------------------------------------------------------------
# Measured on one H200 (remainder at 2^27 outputs unless stated; docs/decisions.md has the
# reasoning). They are the CUDA backend's defaults for every device: the only GPU measured
# so far. `stridewise tune` measures another device and writes its own tuning on top.
_H200 = "NVIDIA H200 (sm_90)"


def _h200(date: str, command: str, figure: str) -> Measurement:
    return Measurement(_H200, date, command, figure)


_SWEEP = "tools/tune_gpu.py --items 1,2,4,8 --blocks 128,256,512"
_CLIFFS = "tools/cliffs.py --log2 26 --algorithms General,Rows,ShortRows,Tiled (seeds 7, 8)"
_CLIFFS_ROWS = "tools/cliffs.py --log2 26 --cases 70 --algorithms General,Rows (seeds 8, 10-12)"
_CUDA_EVIDENCE = (
    ("rows_min_bytes", _h200("2026-12-02", _CLIFFS, "with groups of 8 threads (modes/rows.py), "
                             "against torch eager: rows of 8-34 B 0.37-0.47x, General "
                             "0.87-1.27x; 58 B 1.08x against 1.10x; 64-264 B rows 1.24-3.04x, "
                             "General 1.03-1.27x. Read 32 KB apart 0.70x against 1.02x, 32 B "
                             "apart 1.38x against 1.42x; 12-24 B apart equal. 2026-12-03 "
                             "(" + _CLIFFS_ROWS + "): rows read 32 B to 1 MB apart whose next "
                             "row is one element on 1.75-2.00x, General 1.05-1.33x; read apart "
                             "otherwise, General equal or ahead (1.00-1.01x against 0.55x)")),
    ("sector_bytes", Measurement(
        "NVIDIA H100 80GB HBM3 (sm_90)", "2026-12-06", "Rows() against General() on a "
        "contiguous tensor beside its channels_last copy, 2^24 (bench/gpu-fortieth-h100-rows-"
        "rule.txt)", "x torch eager, rows / general: float16 16 channels (32 B apart) 0.49 / "
        "1.05, 8 channels (16 B, 8 elements) 0.75 / 1.10, float32 8 channels 0.52 / 0.96; "
        "float32 4 channels (16 B, 4 elements) 1.06 / 0.98 keeps rows")),
    ("tiled_min_rows", Measurement(
        "NVIDIA H100 80GB HBM3 (sm_90)", "2026-12-06", "Tiled() (tiles fitted to the channels) "
        "against General() and Rows() on an NCHW tensor beside a channels_last one, full or "
        "broadcast over N, 2^24 (bench/gpu-fortyfirst-h100-fitted-tiles.txt)", "x torch eager, "
        "tiled / general / rows: float32 8 channels (8-row tiles) 1.16 / 0.95 / 0.52, 16 "
        "channels 1.25 / 0.97 / 0.57; float16 8 channels 1.41 / 1.10 / 0.75; 4 channels (4-row "
        "tiles) mixed, rows kept: float32 broadcast 1.10 / 0.91 / 1.33, full 1.14 / 0.98 / "
        "1.06, float16 1.52-1.74 / 1.10-1.13 / 1.49-1.53")),
    ("rows_min_elements", _h200("2026-12-03", _CLIFFS_ROWS, "rows of 8-16 elements (64 B of "
                                "4- and 8-byte types) 0.62-0.94x torch eager, General 1.11-1.87x; "
                                "16-bit rows of 32-63 elements 1.25-2.12x, General 1.02-1.20x; "
                                "int64 rows of 16, 1.12x against 1.07x. Tiles too (2026-12-03, "
                                "seeds 42, 43): a transpose's rows of 31 float32 (tiles 97% "
                                "full) tiled 0.93x, General 1.23x; rows of 63 int32, 127 uint8 "
                                "and 8192 float16 (1-element packs) tiled 1.47-2.50x, Rows and "
                                "General 0.63-1.06x")),
    ("tiled_min_fill", _h200("2026-12-02", _CLIFFS, "tiles 6-59% full (a tile dim of 4-35 "
                             "elements, or 65 of 128): tiled 0.04-0.94x torch eager, General "
                             "1.00-1.43x; full tiles (permuted 2^13 x 2^14) 3.7x; 2026-12-03 "
                             "(seeds 42, 43, add, multiply, remainder): tiles of 1-element "
                             "packs counted as such, 99% full: uint8 (509, 1024, 127) tiled "
                             "1.47x, Rows 0.63x, General 1.06x; int32 (127, 8193, 63) tiled "
                             "2.50x, General 0.91x")),
    ("block_size", _h200("2026-11-30", _SWEEP, "block 128 fastest or within 2% in 22 of 24 "
                         "cells (row float32 3778 GB/s at 128, 3516 at 256, 2500 at 512)")),
    ("items_per_thread", _h200("2026-11-30", _SWEEP, "4 packs beat 2 in the flat modes "
                               "(contiguous float16 4058 against 3753 GB/s); rows equal")),
    ("contiguous.items_per_thread", _h200("2026-11-30", "tools/tune_gpu.py --items 2,4 "
                                          "--blocks 128", "2 beat 4 in 34 of 36 cells by 0.5-2.5%")),
    ("scalar.items_per_thread", _h200("2026-11-30", "tools/tune_gpu.py --items 2,4 --blocks 128",
                                      "2 beat 4 in 34 of 36 cells by 0.5-2.5%")),
    ("waves", _h200("2026-11-30", "tools/waves_ab.py --values 32,1024 --torch", "a block per "
                    "unit of work: 32 waves lost 1-12% at 2^30 (contiguous float32 4202 against "
                    "4391 GB/s)")),
    ("short_rows.waves", _h200("2026-11-30", "tools/waves_ab.py --values 32,1024", "1024 waves "
                               "lost 2-6% in float64 and int64 (a block builds its period "
                               "tables once for all of its steps)")),
    ("tile", _h200("2026-11-30", "tools/tune_gpu.py --tiles 16,32,64", "tiles of 16 and 64 "
                   "3-12% slower than 32")),
    ("share_rows", _h200("2026-11-30", "tools/tune_gpu.py --share 0,1", "outer products "
                         "float64 +11%, int32 +18%, int64 +21%; a dense dividend lost "
                         "(crossed float64 -8%)")),
    ("short_rows.share_rows", _h200("2026-12-02", "tools/short_rows_resident_run.sh (tools/"
                                    "algorithms_ab.py --cases bias_channels_last, 3 rounds)",
                                    "a per-channel divisor resident: float16 198.7 -> 142.7 us, "
                                    "bfloat16 183.6 -> 161.1, float32 333.4 -> 266.0, int8 "
                                    "173.0 -> 85.4, uint8 162.6 -> 70.9, int16 228.0 -> 136.9; "
                                    "int32 270.2 / 271.5, float64 543.8 / 542.8")),
    ("contiguous.keep_loads", _h200("2026-11-30", "tools/auto_ab.py --anchor", "contiguous "
                                    "+1.0-1.3% (int32 4270 -> 4320 GB/s); python-scalar "
                                    "float32 -8%, int64 rows -12%")),
    ("pack_bytes", Measurement("OneFlow elementwise.cuh", "-", "-", "16-byte packs: the widest "
                               "single load and store")),
)
_NARROW = ("float16", "bfloat16", "int8", "uint8")
_CUDA_KERNELS = KernelTables(
    # Register caps (__maxnreg__): more resident warps hide the remainder's latency better
    # than the spared registers would.
    max_registers={"tiled": 80, "short_rows": 72, ("short_rows", "int32"): 56,
                   ("short_rows", "int64"): 64, ("short_rows", "float16"): 80,
                   ("short_rows", "bfloat16"): 80, ("rows", "int64", "repeated"): 64,
                   ("tiled", "float16"): 72, ("tiled", "bfloat16"): 80,
                   # short_rows' resident divisor holds its prepared form for the whole loop:
                   # caps where the 16-bit and 1-byte kernels do not spill (tools/sass.py; at
                   # 80 bfloat16 spilled 208 bytes; int8 takes 80, and capped at 64 lost 1.2%)
                   ("short_rows", "float16", "repeated"): 96, ("short_rows", "bfloat16", "repeated"): 128,
                   ("short_rows", "int8", "repeated"): 96, ("short_rows", "uint8", "repeated"): 96},
    # int64 rows kernels with a repeated row (outer products; misaligned and odd-length rows
    # too) put their packs through the division together (kernels.cuh run_packs kBatch): with
    # one form for every divisor their arithmetic interleaved (outer +2-5%); since the warp's
    # choice of form (functors.h Divisor<i64>) each division sits behind its branch, and with
    # a vote in every division the outer product unbatched measured the same
    # (bench/gpu-thirtyfifth-int64-forms-ab.json; the kept vote was not timed unbatched).
    batched={("rows", "int64", "repeated"): True},
    # Tall, narrow tiles (the tuning makes them 8 packs wide); int32 stays square.
    tile_rows={("tiled", "float16"): 128, ("tiled", "bfloat16"): 128, ("tiled", "float32"): 64,
               ("tiled", "float64"): 64, ("tiled", "int64"): 64},
    # contiguous compiled for its 2 packs per thread: 32 registers in int32 where 4 took 56.
    # rows compiled for 2 in 8- and 16-bit numbers whose divisor varies along the row (float16
    # remainder 54 registers where 4 took 72); a repeated or broadcast divisor, prepared once
    # for many dividends, keeps 4 (a 3-d outer product lost 5-9% at 2), but float16's shared
    # row beside a dense dividend (misaligned, odd rows, row, middle broadcast) takes 2; its
    # outer products, which `lookup` keys "outer" before "repeated", keep 4 by their own entry.
    # An int8 outer product prepares its divisor words (the word form, words.h) for 8 rows,
    # and a float32 one its divisor (functors.h Divisor<float>).
    loads={"contiguous": 2, **{("rows", t): 2 for t in _NARROW},
           **{("rows", t, kind): 4 for t in _NARROW for kind in ("repeated", "bcast")},
           ("rows", "float16", "repeated"): 2, ("rows", "float16", "outer"): 4,
           ("rows", "int8", "outer"): 8, ("rows", "float32", "outer"): 8},
    # i mod period as a multiply-high where short_rows is instruction-bound.
    fast_div={("short_rows", "float16"): True, ("short_rows", "bfloat16"): True,
              ("short_rows", "int64"): True},
    # float32 remainder without step 0 where no lane of a warp needs it, in the outer
    # products only: their inputs stay in cache, so their time is instructions; a kernel that
    # streams an input pays for the form's registers in resident warps instead.
    short_form={("rows", "float32", "outer"): True},
    # bfloat16's exact form (the table, bf16_fmod, in every lane of a flagged warp) as a call
    # in the tiled kernel, whose fast path it otherwise crowded (80 registers, 16 bytes spilled);
    # float32's in short_rows' resident-divisor kernel, which it crowded past its cap of 72
    outline_exact={("tiled", "bfloat16"): True, ("short_rows", "float32", "repeated"): True},
    row_unit_packs=4, row_unit_packs_outer=16, row_unit_batches=2,
    row_unit_batches_outer={"float64": 1},
)
_KERNEL_EVIDENCE = (
    ("kernels.max_registers", _h200("2026-11-30", "tools/tune_gpu.py --caps 0,64,72,80",
                                    "tiled at 80 +5-10% in four dtypes; short_rows at 72 "
                                    "+2-10% in four, int32 at 56 +3-4%, int64 at 64 +2.5-5.5% "
                                    "(56 spilled); outer int64 batched at 64 (56 -10-13%); "
                                    "16-bit tiles of 128 rows at 72 (2026-12-02, caps 96 / 80 "
                                    "/ 72, 8 bytes spilled: permuted float16 241-243 / 230 / "
                                    "230 us, bfloat16 213 / 207-210 / 203-204); bfloat16 at 80 "
                                    "since its warp's vote (FlagsFirst): at 72 it spilled 40 "
                                    "bytes and permuted bfloat16 read 240.7 against 206.2 us; "
                                    "at 80, 16 bytes (tools/sass.py), and 80 keeps 3 blocks of "
                                    "256 threads an SM as 72 does; caps 72 / 80 / 88, 2 rounds: "
                                    "permuted bfloat16 240-245 / 231 / 235-240 us (2026-12-03)")),
    ("kernels.outline_exact", _h200("2026-12-03", "tools/auto_ab.py, 3 rounds", "tiled "
                                    "bfloat16 with the exact form as a call: permuted narrow, "
                                    "wide and specials 232-237 -> 215-218 us, huge quotients, "
                                    "subnormal divisors and near max 332-342 -> 363-369 us")),
    ("kernels.outline_exact.short_rows", Measurement(
        "NVIDIA H100 80GB HBM3 (sm_90)", "2026-12-06", "tools/auto_ab.py, 2 rounds", "short_rows' "
        "resident float32 kernel with the exact form (88-bit windows) as a call: narrow 359 us "
        "as before, subnormal divisors 572 -> 536, near max 520 -> 536; inline it wanted 91 "
        "registers against the cap of 72 (64 bytes spilled)")),
    ("kernels.batched", _h200("2026-11-30", "tools/auto_ab.py", "outer int64 +2-5%; batched "
                              "everywhere the other kernels lost up to 45%")),
    ("kernels.tile_rows", _h200("2026-11-30", "tools/auto_ab.py; tools/tune_gpu.py "
                                "--tile-rows", "16-bit at 128 rows +2-3% (float16 3952 -> "
                                "4078 GB/s); float32, float64, int64 at 64 +1-2%; int32 "
                                "lost")),
    ("kernels.loads", _h200("2026-11-30", "tools/auto_ab.py --anchor", "against torch "
                            "eager int32 0.985 -> 0.993, int64 0.988 -> 0.997")),
    ("kernels.loads.float16", Measurement(
        "NVIDIA H100 80GB HBM3 (sm_90)", "2026-12-06", "tools/auto_ab.py --rounds 2 (bench/"
        "gpu-thirtyeighth-16bit-repeated-loads-ab.json)", "float16's shared row beside a dense "
        "dividend at 2 rows a batch against 4, us: misaligned 194 -> 189, odd_rows 190 -> 186, "
        "row 185 -> 183-184, middle_bcast 185 -> 184, crossed_3d 191 -> 189; outer products "
        "keep 4 (86-87 either way); bfloat16 at 2 lost odd_rows 190 -> 198, misaligned 204 -> "
        "205")),
    ("kernels.loads.outer", _h200("2026-12-01", "tools/small_dtypes_run.sh (auto_ab --anchor, "
                                  "3 rounds)", "outer int8 at 8 rows a batch 3254 -> 3791 GB/s "
                                  "(+16.5%; 70% -> 82% of write); at 8 rows int8, uint8 and bool "
                                  "lost 0.6-0.7%, outer uint8 4.0%, outer bool 3.2%")),
    ("kernels.loads.outer.float32", _h200("2026-12-03", "tools/auto_ab.py --rounds 3 (bench/"
                                          "gpu-sixteenth-outer-loads-ab.txt)", "float32 outer "
                                          "products at 8 packs against 4, us: outer 140-141 -> "
                                          "132-135 (narrow, wide, specials), outer_3d 146-149 -> "
                                          "141-145; at 16 141-142 and 157-158; bfloat16 outer 77 "
                                          "/ 77, outer_3d 81-82 -> 83-84, int64 outer 273-276 -> "
                                          "341-346: those keep 4")),
    ("kernels.fast_div", _h200("2026-11-30", "tools/tune_gpu.py", "float16 and bfloat16 "
                               "+7.5%, int64 +13%; float32, float64, int32 2-5% slower")),
    ("kernels.short_form", _h200("2026-12-02", "tools/auto_ab.py --anchor (the short form in "
                                 "every float32 kernel against none, 2 rounds)", "outer "
                                 "float32 160 -> 140 us, outer_3d 160 -> 146; streamed inputs "
                                 "lost: python_scalar 260 -> 289 (46 -> 54 registers), row "
                                 "252 -> 265, short_rows 303 -> 313, bias_channels_last 255 "
                                 "-> 284; contiguous equal; python_scalar at 2 packs in flight "
                                 "(32 registers) 264-277 against 264-275")),
    ("kernels.row_units", _h200("2026-11-30", "tools/tune_gpu.py --units 1,2,4,8",
                                "one row per unit: 4 packs +1-3% over 8; shared rows: 2 "
                                "batches (outer float16 3984 -> 4209 GB/s), float64 1; outer "
                                "products not sharing keep 16 (-5% at 8)")),
    ("kernels.row_loads", _h200("2026-12-01", "tools/rows_loads_ab.py (rows compiled for 4 "
                                "and 2 packs, interleaved)", "2 against 4: misaligned bfloat16 "
                                "+18%, odd rows +14%, middle broadcast +13%, row int8 +23%, "
                                "uint8 +26%, float16 +0-14%; a 3-d outer product's broadcast "
                                "divisor -5% (bfloat16) and -9% (float16)")),
)
# Auto's hoisting: the fused bench's hoisted kernels against unhoisted ones (figures are
# operations saved per byte moved, _hoist.rule_inputs). The cut sits between the norm, which
# lost, and the seed, which won, near the H200's float32 operations per byte of bandwidth (~7).
_HOIST_EVIDENCE = (
    ("hoist_work_per_byte", _h200("2026-12-01", "python -m stridewise.bench.fused cuda",
                                  "norm per channel (1.1 / 0.56 per byte) hoisted 0.204 / 0.322 "
                                  "ms against unhoisted 0.139 / 0.283 (float32 / float64); "
                                  "seed (30 / 15 per byte) 0.888 / 1.701 against 1.492 / "
                                  "3.255")),
)
_CUDA = ElementwiseTuning(
    block_size=128, items_per_thread=4, waves=1024, tile=32, share_rows=True,
    hoist_work_per_byte=4.0, rows_min_bytes=64, rows_min_elements=32, sector_bytes=32,
    tiled_min_fill=0.75, tiled_min_rows=8,
    modes=(("contiguous", "items_per_thread", 2), ("scalar", "items_per_thread", 2),
           ("short_rows", "waves", 32), ("contiguous", "keep_loads", True)),
    source=f"{_H200}, 2026-11-30: tools/tune_gpu.py, tools/auto_ab.py, tools/waves_ab.py "
           "(docs/decisions.md)",
    evidence=_CUDA_EVIDENCE + _KERNEL_EVIDENCE + _HOIST_EVIDENCE, kernels=_CUDA_KERNELS)
register_tuning("cuda", None, _CUDA)

# The host: one thread of a 2-core Xeon (AVX-512) shared with other jobs, medians of 9 and 15
# interleaved rounds (`OMP_NUM_THREADS=1 taskset -c 1 python tools/hoist_rule.py cpu`). The
# cut sits between the norm (1.1 per byte), which never gained, and the distance (1.5), which
# did; the host's cut is lower than the GPU's: a libm call there costs tens of cycles.
register_tuning("cpu", None, replace(_DEFAULT, hoist_work_per_byte=1.25, short_row_bytes=64,
                                     tiled_alias_bytes=512, tiled_min_fill=0.75, evidence=(
    ("tiled_alias_bytes", Measurement(
        "AMD EPYC, 2 threads (the development machine)", "2026-12-03", "Rows() against Tiled() "
        "on (R, C) + (C, R).T (add, remainder), medians of 9; tools/cliffs.py --device cpu "
        "--log2 20 --algorithms General,Rows,ShortRows,Tiled --seed 21", "against torch CPU, rows / "
        "tiled: a transposed step of 4092, 8000, 8160, 8184, 8188, 12000, 16380 or 8208 B "
        "1.04-5.09x / 0.56-2.55x (rows ahead in all 8); of 2048, 4096, 6144, 7680, 8192, 16384 "
        "or 32768 B 0.83-1.54x / 1.10-5.05x (tiled ahead in all 7); 4000 B 1.00x / 1.49x")),
    ("tiled_min_fill", Measurement(
        "AMD EPYC, 2 threads (the development machine)", "2026-12-03", "tools/cliffs.py "
        "--device cpu --log2 20 --algorithms Rows,Tiled --seeds 21, 22", "transposes whose tiles "
        "would be under 75% full (rows of 4, 16 or 65 elements), at any step: rows 1.24-6.95x "
        "torch CPU, tiled 0.52-4.17x (rows ahead 1.7-2.4x in each of 4); 32-element int64 rows "
        "(tiles 50% full) tiled 1.66x against rows 1.28x")),
    ("short_row_bytes", Measurement(
        "Intel Xeon (AVX-512), 1 thread", "2026-12-01", "OMP_NUM_THREADS=1, ShortRows() against "
        "Rows() on 2^20 outputs by a periodic row, CPU time, medians of 11", "rows faster from "
        "64-byte rows on (float32 1.56 against 1.96 ms at 64 B, 1.20 against 1.94 at 256 B; "
        "int64 even at 64 B; float16 1.76 against 2.12 at 64 B), slower below (float16 4.24 "
        "against 1.95 at 32 B)")),
    ("hoist_work_per_byte", Measurement(
        "Intel Xeon (AVX-512), 1 thread", "2026-12-01", "tools/hoist_rule.py cpu --rounds 9; "
        "--rounds 15", "hoisted against unhoisted: seed (29 / 14.5 operations per byte, float32 "
        "/ float64) 2.00x / 1.88x; distance on a grid (1.5 / 0.75) 1.38-1.83x / 0.90-0.98x; "
        "norm per channel (1.1 / 0.56) 0.57-0.97x / 0.76-1.05x")),)))

# int64 rows of up to 8 elements on the host run general: the rows loop's set-up per row
# outweighs their arithmetic.
register_tuning("cpu", None, replace(
    _REGISTRY[("cpu", None, None)], rows_min_elements=9,
    evidence=_REGISTRY[("cpu", None, None)].evidence + (("rows_min_elements", Measurement(
        "AMD EPYC Zen 4, 2 threads (the development machine)", "2026-12-06", "Rows() against "
        "General() on 2^20 int64 outputs in rows of 2-8, a sliced dividend or a transposed "
        "divisor (remainder, add, floor_divide)", "x torch CPU, rows / general: rows of 2-5 "
        "remainder 0.44-0.61 / 1.02-1.40, floor_divide 0.60-0.96 / 1.50-2.22, add 0.37-0.89 / "
        "0.60-1.36; rows of 8 remainder 0.96-0.98 / 1.16, floor_divide 1.69-1.72 / 2.00-2.10, "
        "add 1.19 / 1.04 sliced and 0.85 / 0.98 transposed; the cliffs hunt's remainder in rows "
        "of 2 (seed 3906) 0.36 / 1.16")),)), "int64")

# Per dtype: permuted views in tiles 8 packs wide (with kernels.tile_rows) in groups along j,
# so neighbouring blocks read one run of each staged column; short rows with more packs per
# thread and fewer blocks where each block's period tables pay; keep_loads where it paid.
_TILE8 = _h200("2026-11-30", "tools/tune_gpu.py --tile-rows; tools/auto_ab.py",
               "tiles 8 packs wide by 64-128 rows +1-3% over square tiles of 32")
_GROUPS = "tools/tune_gpu.py --tile-groups 1,2,4,8"
_SHORT8 = _h200("2026-11-30", "tools/tune_gpu.py --items 4,8", "short_rows at 8 packs per "
                "thread +2-4% (float16 3581 -> 3738 GB/s)")
_SHORT1K = _h200("2026-12-01", "tools/short_rows_ab.py; tools/algorithms_ab.py", "512-byte rows "
                 "flat beat rows (float32 172 against 201 us, float64 277 against 348 at 2^26; "
                 "float64 bias_channels_last 528 against 680 at 2^27), 1 KB rows did not (150 "
                 "against 155, 279 against 284)")
_SHARED8 = _h200("2026-12-02", "tools/auto_ab.py --anchor --rounds 3 (Auto with share_all_rows "
                 "against without)", "row (R, C) % (C,) at 2^27: int8 3539 -> 3723 GB/s (+5.2%, 85% "
                 "-> 89% of copy), uint8 3643 -> 3859 (+5.9%, 87% -> 92%), every round; unchanged "
                 "cells moved within 1.5%")
_SCALAR4 = _h200("2026-12-03", "tools/algorithms_ab.py --cases python_scalar,scalar_tensor --rounds 3 "
                 "--algs 'Auto();Scalar(items_per_thread=4, keep_loads=True);...'", "4 packs a thread "
                 "with kept loads against 2 without, us: python_scalar float32 270.3 -> 256.2 (torch "
                 "eager 259.4), int32 260.8 -> 257.2 (259.2), float64 521.2 -> 505.3; scalar_tensor "
                 "float32 268.1 -> 254.5, int32 259.3 -> 256.6, float64 515.5 -> 505.6; 4 packs alone "
                 "lost in int32 and float64 (267.6, 532.5), 8 packs lost everywhere")
_SCALAR4_MODES = (("scalar", "items_per_thread", 4), ("scalar", "keep_loads", True))
_SCALAR4_EVIDENCE = (("scalar.items_per_thread", _SCALAR4), ("scalar.keep_loads", _SCALAR4))
_SCALAR_MORE = _h200("2026-12-03", "tools/algorithms_ab.py --cases python_scalar,scalar_tensor --rounds 3 "
                     "(bench/gpu-fifteenth-scalar-ab.txt)", "against 2 packs without kept loads, "
                     "python_scalar / scalar_tensor, us: bfloat16 at 4 packs with kept loads 147.3 / "
                     "133.0 -> 129.7 / 128.7 (torch eager 167.7); int64 with kept loads 518.5 / 510.8 "
                     "-> 502.0 / 499.5 (at 4 packs 531.9 / 526.4); int8 at 4 packs 70.0 / 74.6 -> "
                     "66.8 / 67.2, uint8 70.5 / 72.6 -> 66.9 / 66.1 (kept loads no further); int16 "
                     "equal every way (128-130)")
_SHARED_BF16 = _h200("2026-12-03", "tools/auto_ab.py --rounds 2 (main against share_all_rows)",
                     "the shared row's pair form (functors.h Fast2) beside a dense dividend, us: row "
                     "157-161 -> 135-137, middle_bcast 161-163 -> 137-140, crossed_3d 162 -> 141-142; "
                     "misaligned and odd rows (shifted, not shared) equal")
_SHIFTED_BF16 = _h200("2026-12-03", "tools/algorithms_ab.py --cases odd_rows,misaligned --algs "
                      "'Auto();Rows(share_rows=True)' --rounds 3 (bench/gpu-fifteenth-short-rows-ab.txt)",
                      "shifted rows shared, with the shared row's pair form: odd_rows 171.1 -> 144.7 "
                      "us, misaligned 180.0 -> 167.1 (torch eager 455, 448); before the pair form's "
                      "two stages misaligned had lost (175 -> 207)")
_GATHER_WIDE = _h200("2026-12-03", "tools/algorithms_ab.py --cases short_rows,rgb_channels_last,"
                     "bias_channels_last --algs 'Auto();ShortRows(share_rows=False)' --rounds 3",
                     "resident against gathered, us: float64 529.9 / 534.3 / 535.3 against 524.6 / "
                     "523.2 / 526.3, int32 267.6 / 267.9 / 268.4 against 265.4 / 265.2 / 265.7, int64 "
                     "531.1 / 536.7 against 522.8 / 521.4 (the 16-bit dtypes and float32 gained 8-23%)")
_GATHER_MODES = (("short_rows", "share_rows", False),)
_FIT16 = Measurement(
    "NVIDIA H100 80GB HBM3 (sm_90)", "2026-12-06", "as tiled_min_rows above", "x torch eager, "
    "tiled / general: 16 channels (16-row tiles) float64 1.37-1.57 / 1.00-1.03, int64 1.32-1.49 "
    "/ 1.00; 8 channels (8-row tiles) float64 broadcast 1.45 / 1.43, int64 1.06 / 1.00 full and "
    "0.96 / 1.00 broadcast, 4 channels 0.97 / 1.02 broadcast: general kept below 16 rows")
_CUDA_DTYPES = {
    "float16": (dict(tile=8, tile_group=4, share_all_rows=True, share_shifted_rows=True,
                     short_row_bytes=256, modes=(
        ("short_rows", "items_per_thread", 8), ("short_rows", "waves", 4),
        ("scalar", "items_per_thread", 4), ("scalar", "keep_loads", True))), (
        ("tile", _TILE8),
        ("share_all_rows", _h200("2026-12-01", "tools/short_rows_ab.py; tools/algorithms_ab.py "
                                 "--algs 'Auto();Rows(share_rows=True)'", "a row beside a dense "
                                 "dividend, shared: 256 B rows 108 -> 89 us, 512 B 113 -> 70, 1 KB "
                                 "90 -> 71 (2^26); middle_bcast 171 -> 136 us (2^27); odd and "
                                 "misaligned rows, which share nothing, equal")),
        ("share_shifted_rows", _h200("2026-12-02", "tools/algorithms_ab.py --cases misaligned,odd_rows "
                                     "--algs 'Auto();Rows(share_rows=True);Rows(share_rows=False)'",
                                     "shared shifted rows: misaligned 182.7 -> 159.3 us, odd_rows "
                                     "179.6 -> 140.7 (2^27); unshared they stay in bfloat16 (190 "
                                     "against 266 us), float32 (263 against 296) and int64 (534 "
                                     "against 557)")),
        ("short_row_bytes", _h200("2026-12-01", "tools/short_rows_ab.py; tools/algorithms_ab.py",
                                  "rows from 256 B shared beat flat (89 against 108 us at 256 B); "
                                  "128 B rows flat (bias_channels_last 196 against 327 us)")),
        ("tile_group", _h200("2026-11-30", _GROUPS, "groups of 4 +9% (3650 -> 3990 GB/s)")),
        ("short_rows.items_per_thread", _SHORT8),
        ("short_rows.waves", _h200("2026-11-30", "tools/waves_ab.py --values 32,8,4,3",
                                   "4 waves +2.5-4.5% (3634-3654 -> 3726-3743 GB/s)")),
        ("scalar.items_per_thread", _h200("2026-11-30", "tools/tune_gpu.py --items 2,4",
                                          "4 beat 2 by 1-1.5% (3936 against 3874 GB/s)")),
        ("scalar.keep_loads", _h200("2026-11-30", "tools/auto_ab.py --anchor",
                                    "+4.4-4.6% (3982 -> 4164 GB/s)")))),
    "bfloat16": (dict(tile=8, tile_group=4, share_all_rows=True, share_shifted_rows=True, modes=(
        ("short_rows", "items_per_thread", 8), ("short_rows", "waves", 4), *_SCALAR4_MODES)), (
        ("scalar.items_per_thread", _SCALAR_MORE), ("scalar.keep_loads", _SCALAR_MORE),
        ("tile", _TILE8),
        ("share_all_rows", _SHARED_BF16), ("share_shifted_rows", _SHIFTED_BF16),
        ("tile_group", _h200("2026-11-30", _GROUPS, "groups of 4 +8% (3659 -> 3929 GB/s)")),
        ("short_rows.items_per_thread", _SHORT8),
        ("short_rows.waves", _h200("2026-11-30", "tools/waves_ab.py --values 32,8,4,3",
                                   "4 waves +4% (3566-3576 -> 3724-3740 GB/s)")))),
    "float32": (dict(tile=8, tile_group=2, short_row_bytes=1024, modes=(
        ("tiled", "block_size", 256), ("rows", "keep_loads", True),
        ("short_rows", "keep_loads", True), *_SCALAR4_MODES)), (
        *_SCALAR4_EVIDENCE,
        ("tile", _TILE8),
        ("tile_group", _h200("2026-11-30", "tools/waves_ab.py", "groups of 2 +1% "
                             "(4093-4148 -> 4145-4172 GB/s)")),
        ("tiled.block_size", _h200("2026-11-30", "tools/tune_gpu.py --blocks 128,256",
                                   "256 +3-4% in four A/B calls")),
        ("rows.keep_loads", _h200("2026-11-30", "tools/auto_ab.py --anchor",
                                  "row +4% (4075 -> 4243 GB/s), crossed 3-d +3.5%")),
        ("short_rows.keep_loads", _h200("2026-11-30", "tools/auto_ab.py --anchor", "+2-4%")),
        ("short_row_bytes", _SHORT1K))),
    "int32": (dict(tile_group=2, stage=True, modes=(
        ("short_rows", "items_per_thread", 8), ("short_rows", "waves", 8),
        *_GATHER_MODES, *_SCALAR4_MODES)), (
        *_SCALAR4_EVIDENCE, ("short_rows.share_rows", _GATHER_WIDE),
        ("tile_group", _h200("2026-11-30", "tools/waves_ab.py", "groups of 2 +1.5% "
                             "(3992-4004 -> 4051-4067 GB/s)")),
        ("stage", _h200("2026-11-30", "tools/auto_ab.py --anchor compile", "staged tiles "
                        "3865-4060 -> 4063-4135 GB/s; the other dtypes lost with them")),
        ("short_rows.items_per_thread", _SHORT8),
        ("short_rows.waves", _h200("2026-11-30", "tools/waves_ab.py --values 32,8,4",
                                   "8 waves +2% (3853-3911 -> 3942-4009 GB/s)")))),
    "float64": (dict(tile=8, tile_group=2, short_row_bytes=1024, tiled_min_rows=16,
                     modes=_GATHER_MODES + _SCALAR4_MODES), (
        *_SCALAR4_EVIDENCE, ("short_rows.share_rows", _GATHER_WIDE), ("tiled_min_rows", _FIT16),
        ("tile", _TILE8),
        ("tile_group", _h200("2026-11-30", _GROUPS, "groups of 2 +3% (3990-4020 -> "
                             "4134-4138 GB/s)")),
        ("short_row_bytes", _SHORT1K))),
    # 1-byte remainder: the shared row's divisor words (a reciprocal per lane, words.h) are
    # prepared once per 4 rows, where each pack paid them (0.25 MUFU.RCP an element, not 1).
    **{dtype: (dict(share_all_rows=True, modes=(("scalar", "items_per_thread", 4),)), (
        ("share_all_rows", _SHARED8), ("scalar.items_per_thread", _SCALAR_MORE))) for dtype in ("int8", "uint8")},
    "int64": (dict(tile=8, share_all_rows=True, tiled_min_rows=16,
                   modes=(("scalar", "keep_loads", True), *_GATHER_MODES)), (
        ("scalar.keep_loads", _SCALAR_MORE), ("short_rows.share_rows", _GATHER_WIDE),
        ("tiled_min_rows", _FIT16),
        ("tile", _TILE8),
        ("share_all_rows", _h200("2026-12-01", "Rows(share_rows=True) against Auto()",
                                 "crossed 3-d +4.2% (3749-3774 -> 3907-3933 GB/s)")))),
}
for _dtype, (_fields, _evidence) in _CUDA_DTYPES.items():   # a dtype's overrides follow the base's
    register_tuning("cuda", None, replace(
        _CUDA, **dict(_fields, modes=_CUDA.modes + _fields.get("modes", ())),
        evidence=_CUDA.evidence + _evidence, source=_CUDA.source + "; per dtype: " + ", ".join(
            f"{k}={v}" for k, v in _fields.items())), _dtype)
