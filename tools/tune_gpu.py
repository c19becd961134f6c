"""Time remainder per case over items_per_thread x block_size on the GPU (2^27 outputs).

    PYTHONPATH=src python tools/tune_gpu.py [--cases row,outer] [--dtypes float32,float16]

Each case runs with its mode's algorithm class and every (items, block) pair, or (tile, block)
pair for `tiled`; `rows` once per share_rows value, and every case once per register cap with
--caps, pack width with --pack-bytes, rows work unit with --units and, for `tiled`, tile
group with --tile-groups and rows per tile with --tile-rows (a line each). The table shows
GB/s (compulsory bytes), so the tuning defaults in stridewise/tuning.py (its fields and its
KernelTables: caps, units, tile rows) can be chosen from data. `stridewise tune` runs a quick
sweep of the same kind and writes this device's tuning file.
"""
from __future__ import annotations

import argparse
import itertools
import json

import stridewise as sw
from stridewise import algorithms, tuning
from stridewise.launch import pipeline as _ops
from stridewise.bench import matrix as bench

KERNELS = tuning.elementwise_tuning("cuda").kernels   # shared by every dtype's tuning
SHIPPED_CAPS = dict(KERNELS.max_registers)
SHIPPED_UNITS = KERNELS.row_unit_packs, KERNELS.row_unit_batches, KERNELS.row_unit_batches_outer
SHIPPED_TILE_ROWS = dict(KERNELS.tile_rows)

CLASSES = algorithms.ALGORITHMS   # mode -> algorithm class, from the mode registry


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="contiguous,scalar_tensor,row,column,outer,short_rows,crossed_3d,permuted")
    ap.add_argument("--dtypes", default="float32,float16,float64")
    ap.add_argument("--items", default="1,2,4,8")
    ap.add_argument("--blocks", default="128,256,512")
    ap.add_argument("--tiles", default="16,32,64", help="tile edges, in place of items for tiled")
    ap.add_argument("--share", default="0,1", help="share_rows values for rows cases")
    ap.add_argument("--caps", default="", help="register caps to sweep for each case's mode "
                    "(KernelTables.max_registers; 0 = none), a line each; default: as shipped")
    ap.add_argument("--tile-groups", default="", help="Tiled tile_group values, a line each "
                    "(default: the tuning's)")
    ap.add_argument("--tile-rows", default="", help="rows per tile of the tiled kernel, a line each "
                    "(KernelTables.tile_rows; 0 = square tiles; default: as shipped)")
    ap.add_argument("--pack-bytes", default="16", help="bytes per pack (16, 8, ...), a line each")
    ap.add_argument("--units", default="", help="rows work units, a line each: packs per thread, "
                    "or batches where rows share a repeated row (KernelTables.row_unit_*)")
    ap.add_argument("--log2", type=int, default=27)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    blocks = list(map(int, args.blocks.split(",")))
    grid = list(itertools.product(map(int, args.items.split(",")), blocks))
    tiles = list(itertools.product(map(int, args.tiles.split(",")), blocks))
    print("case/dtype/mode".ljust(34) + "".join(f"i{i}b{b}".rjust(9) for i, b in grid))
    rows = []
    shares = [bool(int(x)) for x in args.share.split(",")]
    for case, dtype in itertools.product(args.cases.split(","), args.dtypes.split(",")):
        a, b, out = bench._make_case(case, dtype, args.log2, "torch", "cuda")
        mode = sw.explain(sw.remainder, a, b, out=out).mode
        nbytes = bench.compulsory_bytes(a, b, out)
        for cap in ([int(c) for c in args.caps.split(",")] if args.caps else [None]):
            if cap is not None:
                _set_cap(mode, cap)
            groups = [int(g) for g in args.tile_groups.split(",")] if args.tile_groups and \
                mode == "tiled" else [None]
            units = [int(u) for u in args.units.split(",")] if args.units and \
                mode == "rows" else [None]
            heights = [int(h) for h in args.tile_rows.split(",")] if args.tile_rows and \
                mode == "tiled" else [None]
            for share, pb, group, unit, height in itertools.product(
                    shares if mode == "rows" else [None], map(int, args.pack_bytes.split(",")),
                    groups, units, heights):
                if unit is not None:
                    _set_units(unit)
                if height is not None:
                    _set_tile_rows(height)
                knobs = tiles if mode == "tiled" else grid
                pack = max(1, pb // out.element_size())
                tag = ("" if cap is None else f" r{cap}") + ("" if pb == 16 else f" p{pack}") + \
                    ("" if group is None else f" g{group}") + ("" if unit is None else f" u{unit}") + \
                    ("" if height is None else f" h{height}")
                extra = ({} if pb == 16 else {"pack": pack}) | ({} if group is None else {"tile_group": group})
                line = _time_case(case, dtype, mode, share, a, b, out, nbytes, knobs, tag, extra)
                rows.append(dict(line, cap=cap, pack_bytes=pb, tile_group=group, unit=unit,
                                 tile_rows=height))
        _set_cap(mode, None)
        _set_units(None)
        _set_tile_rows(None)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


def _forget_calls():
    """Drop prepared calls and bound launchers: they hold the kernels built before a change."""
    _ops._MEMO.clear()
    _ops._CALLS.clear()


def _set_cap(mode, cap):
    """Compile `mode`'s kernels with register cap `cap` (0: none; None: as shipped) from
    here on, for every dtype."""
    KERNELS.max_registers.clear()
    KERNELS.max_registers.update(SHIPPED_CAPS)
    if cap is not None:
        for key in [k for k in SHIPPED_CAPS if k == mode or isinstance(k, tuple) and k[0] == mode]:
            del KERNELS.max_registers[key]
        if cap:
            KERNELS.max_registers[mode] = cap
    _forget_calls()


def _set_units(unit):
    """rows work units of `unit` packs per thread, or batches where a row is shared, in every
    case and dtype from here on (None: as shipped)."""
    KERNELS.row_unit_packs, KERNELS.row_unit_batches, KERNELS.row_unit_batches_outer = \
        SHIPPED_UNITS if unit is None else (unit, unit, {})
    _forget_calls()


def _set_tile_rows(height):
    """Tiled kernels of `height` rows per tile (0: square tiles; None: as shipped) in every
    dtype from here on."""
    KERNELS.tile_rows.clear()
    if height is None:
        KERNELS.tile_rows.update(SHIPPED_TILE_ROWS)
    elif height:
        KERNELS.tile_rows["tiled"] = height
    _forget_calls()


def _time_case(case, dtype, mode, share, a, b, out, nbytes, grid, tag="", extra=None):
    """One line of the table: GB/s per knob pair for one case, dtype, share_rows and the
    algorithm fields in `extra`."""
    line = {"case": case, "dtype": dtype, "mode": mode, "share_rows": share, "gbps": {}}
    extra = dict(extra or {}, **({} if share is None else {"share_rows": share}))
    for first, block in grid:
        knob = "tile" if mode == "tiled" else "items_per_thread"
        alg = CLASSES[mode](block_size=block, **{knob: first}, **extra)
        try:
            t = bench.time_cuda(lambda: sw.remainder(a, b, out=out, algorithm=alg))
            line["gbps"][f"{first}/{block}"] = nbytes / t / 1e9
        except Exception as e:  # noqa: BLE001
            line["gbps"][f"{first}/{block}"] = None
            print(f"  {case}/{dtype} {knob} {first} block {block}: {type(e).__name__}: {e}")
    tail = f"  tile/block: {' '.join(line['gbps'])}" if mode == "tiled" else ""
    label = f"{case}/{dtype}/{mode}" + ("" if share is None else f" s{int(share)}") + tag
    print(label.ljust(34) + "".join(
        (f"{v:9.0f}" if v else "        -") for v in line["gbps"].values()) + tail, flush=True)
    return line


if __name__ == "__main__":
    main()
