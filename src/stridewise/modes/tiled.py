"""tiled: tiles keep transposed reads coalesced (on the GPU, P x P blocks transposed in
registers, or staged in shared memory)."""
from __future__ import annotations

from stridewise.algorithms import Tiled
from stridewise.modes._mode import Mode, in_headers, register, template_args


def _applies(plan) -> bool:
    return plan._outputs_inner_unit() and any(
        plan._transposed_dim(k) >= 0 for k in range(plan.nout, len(plan.strides)))


def _prefers(plan, tuning) -> bool:
    """Tiles at least the backend's tiled_min_fill full (tuning.py): along the rows, tiles
    `tile` packs wide (at least 8) of the pack the plan's tiled layout takes (1 where an
    extent or a stride is odd: tiles of 127 uint8 columns are 32 wide, not 512); along j,
    tiles of 32 rows, the shortest any dtype takes (kernels.tile_rows), or fitted to a
    shorter j down to tiled_min_rows (and as many times wider) where the kernel fits them
    (fitted_tile; staged tiles keep their shape). Emptier tiles, and
    rows shorter than rows_min_elements, run the next mode that prefers the plan (`rows`, or
    `general` where rows declines too). Where the backend sets tiled_alias_bytes (the host),
    a transposed input whose step along the rows is not a multiple of it runs `rows` (ranked
    after): its reads do not evict each other there."""
    from stridewise.tuning import ElementwiseTuning
    tuning = tuning or ElementwiseTuning
    alias = tuning.tiled_alias_bytes
    if alias and any(abs(plan.strides[k][-1]) * plan.itemsizes[k] % alias
                     for k in range(plan.nout, len(plan.strides)) if plan._transposed_dim(k) >= 0):
        return False

    def fill(n: int, t: int) -> float:
        return n / (-(-n // t) * t)

    pack = plan.layout("tiled", max(1, tuning.pack_bytes // max(plan.itemsizes))).pack
    shortest = _ROWS if tuning.stage else max(tuning.tiled_min_rows, pack)   # staged: kept shape
    rows, group = fitted_tile(_ROWS, max(tuning.tile, 8), plan.shape[plan._tile_dim()], shortest)
    return plan.shape[-1] >= tuning.rows_min_elements and \
        fill(plan.shape[-1], group * pack) * fill(plan.shape[plan._tile_dim()], rows) >= tuning.tiled_min_fill


_ROWS = 32   # the rows of the shortest tile any dtype's kernel takes unfitted (kernels.tile_rows)


def fitted_tile(rows: int, group: int, nj: int, shortest: int) -> tuple[int, int]:
    """A tile's (rows, packs wide) over a tile dim of nj: halved in height while half still
    covers nj, down to `shortest` rows, and as many times wider; cuda/kernels.cuh
    tiled_kernel takes unstaged tiles so, down to one pack."""
    while rows > shortest and rows // 2 >= nj:
        rows, group = rows // 2, group * 2
    return rows, group


def _kind(plan, k: int, share_rows: bool) -> str:
    if k >= plan.nout and plan._transposed_dim(k) >= 0 and plan.strides[k][plan._tile_dim()] == 1:
        return "staged"
    return plan._inner_kind(k)


def _pack(plan, kinds: list, cap: int) -> tuple[int, int]:
    """Packs run along the last dim (along the tile dim j for a staged operand); a tile holds
    whole packs, so both of its extents divide too: (pack, j)."""
    jd = plan._tile_dim()

    def aligned(k):
        along = jd if kinds[k] == "staged" else plan.ndim - 1
        return plan.ptrs[k] % (cap * plan.itemsizes[k]) == 0 and all(
            s % cap == 0 for d, s in enumerate(plan.strides[k]) if d != along)

    dense = plan._dense(kinds)
    while cap > 1 and not (all(aligned(k) for k in dense) and (
            plan.shape[-1] % cap == plan.shape[jd] % cap == 0)):
        cap //= 2
    return cap, jd


def _args(spec, tables) -> str:
    """Rows per tile where tuned; staged, the tile's width too (it sizes shared memory);
    whether a flagged pack's exact form is a call (tuning.py KernelTables.outline_exact)."""
    return template_args((tables.lookup("tile_rows", spec) or 0, 0), (spec.tile, 0),
                         (tables.lookup("outline_exact", spec, False), False))


def _slots(spec, tables) -> int:
    return 1     # tiles per group


def _grid(spec, plan, alg, tables) -> tuple:
    """Tiles of `rows` rows by `group` packs, as tiled_kernel takes them."""
    from stridewise.backends.cuda import tile_width

    pack = spec.pack
    group = tile_width(alg, pack)
    rows = tables.lookup("tile_rows", spec) or group
    jd, id_ = plan.layout("tiled").aux, plan.ndim - 1
    # the kernel fits unstaged tiles to a short j itself, from the group it is given
    fit_rows, fit_group = (rows, group) if spec.tile else fitted_tile(rows, group, plan.shape[jd], pack)
    work = plan.n // (plan.shape[jd] * plan.shape[id_]) * \
        -(-plan.shape[jd] // fit_rows) * -(-plan.shape[id_] // (fit_group * pack))
    return work, alg.items_per_thread, group, [alg.tile_group]


MODE = register(Mode(
    "tiled", Tiled, rank=30,
    applies=_applies, prefers=_prefers, kind=_kind, pack=_pack,
    example=lambda new: (new((256, 64)).T, new((64, 256))),
    kernels=in_headers("tiled", args=_args, slots=_slots, grid=_grid)))
