"""Dask arrays: a call with a dask array operand returns a lazy dask array.

The graph is Dask's own `blockwise`: Dask aligns the operands' chunks (rechunking to common
block boundaries), and an operand of extent 1 along a dim stays one block that every output
block reads, so a broadcast row is never expanded. Each task runs the stridewise kernel on its
chunks through the ordinary call path, so chunk layout, dtype and promotion follow the chunk
library (NumPy or CuPy) exactly as an eager call would.

The per-chunk callable pickles by reference (a built-in op's name, a user kernel's
constructor arguments): each worker process builds it once, compiles (or loads from the
shared disk cache) once, and from the second chunk of a layout on, every task is a warm
call. Dask is imported only when a dask array is passed.
"""
from __future__ import annotations

import math
import operator
import sys

import numpy as np

from stridewise.launch import pipeline as _ops
from stridewise import plan as _plan

__all__ = ["is_dask", "has_dask", "call"]


def is_dask(x) -> bool:
    t = type(x)
    return t.__name__ == "Array" and t.__module__.split(".", 1)[0] == "dask"


def has_dask(args, out) -> bool:
    """Whether any argument (or out) is a dask array; without dask imported none can be."""
    if "dask" not in sys.modules:
        return False
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return any(is_dask(a) for a in (*args, *outs))


def call(op, args, out, convention, algorithm, inplace, dry):
    """The dask form of `_ops._call`: a dask array (a tuple of them for several outputs),
    or, with `dry`, the Prepared call of the first output chunk (for explain)."""
    if inplace:
        raise TypeError(f"{op.name}_ cannot work in place on a dask array (dask arrays are "
                        f"immutable); use x1 = {op.name}(x1, x2)")
    if out is not None:
        raise TypeError("out= cannot be used with dask arrays (nor a kernel's output "
                        "arguments): the result is a new lazy dask array; drop the outputs and "
                        "use the returned array")
    import dask.array as da

    names = op.names[0]
    if len(args) != len(names):
        raise TypeError(f"{op.name} takes {len(names)} arrays or scalars, got {len(args)}")
    # An unknown extent (a boolean mask's result) is -1 here: it meets only itself or 1, as in
    # Dask's own elementwise ops, whose blockwise then pairs the chunks one to one.
    shapes, shape_names = [], []
    for a, nm in zip(args, names):
        if hasattr(a, "shape"):
            shapes.append(tuple(-1 if math.isnan(n) else n for n in a.shape))
            shape_names.append(nm)
    if not getattr(op, "broadcasting", True) and len(set(shapes)) > 1:
        raise ValueError(f"{op.name} was made with broadcasting=False, but the arguments have "
                         f"shapes {', '.join(map(str, shapes))}; pass equal shapes or drop the flag")
    try:
        shape = _plan.broadcast_shapes(shapes, shape_names)
    except ValueError:
        unknown = [nm for s, nm in zip(shapes, shape_names) if -1 in s]
        if not unknown:
            raise
        raise ValueError(f"{unknown[0]} has unknown chunk sizes, which cannot be matched with the "
                         f"other operands' known ones; call {unknown[0]}.compute_chunk_sizes() "
                         "first") from None
    ndim = len(shape)
    chunk = _Chunk(op, convention, algorithm)
    metas = _meta(chunk, args, max(ndim, 1))   # checks libraries and dtypes, once, up front
    index = "".join(chr(ord("a") + i) for i in range(ndim)) if ndim <= 26 else tuple(range(ndim))
    dask_args = [a for a in args if is_dask(a)]
    pairs = []
    for a in args:
        nd = getattr(a, "ndim", 0)
        if nd and not is_dask(a):
            a = da.from_array(a, chunks=_chunks_along(a, dask_args), asarray=False)
        pairs += (a, index[ndim - nd:]) if is_dask(a) or nd else (a, None)
    if dry:
        return _first_chunk(chunk, args, pairs)
    from dask.base import tokenize

    name = f"stridewise-{op.name}-" + tokenize(chunk, *pairs)
    if op.nout == 1:
        return da.blockwise(chunk, index, *pairs, name=name, dtype=metas.dtype, meta=metas)
    both = da.blockwise(chunk, index, *pairs, name=name, dtype=object, meta=metas)
    return tuple(both.map_blocks(operator.getitem, k, dtype=m.dtype, meta=m,
                                 name=f"{name}-{k}")
                 for k, m in enumerate(metas))


def _meta(chunk, args, ndim):
    """The output meta(s): the call itself on 0-size chunks of each operand's library and
    dtype, so stridewise's own checks and promotion decide the result dtype (one place)."""
    return chunk(*(_empty(a, ndim) for a in args))


def _empty(x, ndim):
    """A 0-size array of x's library, device and dtype (a Python number stays itself)."""
    if not hasattr(x, "dtype"):
        return x
    m = x._meta if is_dask(x) else x
    if getattr(m, "ndim", 0):
        m = m[(slice(0, 0),) * m.ndim]    # never copy a large plain array
    return m.reshape(-1)[:0].reshape((0,) * ndim)


def _chunks_along(x, dask_args) -> tuple:
    """Chunks that split plain array x the way the dask operands are split: per dim, the
    chunks of a dask operand of the same extent there, else one block (extent-1 dims stay
    one block, which Dask broadcasts)."""
    chunks = []
    for d, n in enumerate(x.shape):
        along = n
        if n != 1:
            for a in dask_args:
                j = a.ndim - x.ndim + d
                if j >= 0 and a.shape[j] == n:
                    along = a.chunks[j]
                    break
        chunks.append(along)
    return tuple(chunks)


def _first_chunk(chunk, args, pairs):
    """explain: the Prepared call of the output's first chunk, on C-contiguous chunks of the
    operands' libraries (what a dask chunk usually is)."""
    from dask.array.core import unify_chunks

    _, arrays = unify_chunks(*pairs)
    blocks = []
    for a, orig in zip(arrays, args):
        if is_dask(a):
            blocks.append(np.empty_like(_empty(orig, a.ndim), shape=tuple(c[0] for c in a.chunks)))
        else:
            blocks.append(a)
    return _ops._call(chunk.op, blocks, None, chunk.convention, chunk.algorithm, dry=True,
                      calls=chunk.calls, memo=chunk.memo)


class _Chunk:
    """The call on one tuple of chunks; pickles by reference (see the module docstring)."""

    def __init__(self, op, convention, algorithm):
        self.op, self.convention, self.algorithm = op, convention, algorithm
        self.calls = getattr(op, "_calls", _ops._CALLS)   # user kernels keep their own memos
        self.memo = getattr(op, "_memo", _ops._MEMO)

    def __call__(self, *blocks):
        r = _ops._warm_call(self.op, blocks, None, self.convention, self.algorithm, False,
                            self.calls)
        if r is not None:       # a warm call: no more than the public function's cost
            return r
        try:
            return _ops._call(self.op, blocks, None, self.convention, self.algorithm,
                              calls=self.calls, memo=self.memo)
        except ValueError:
            # Dask's wire format can hand a worker a NumPy chunk at an address that is not a
            # multiple of its element size, which kernels cannot read: run on an aligned copy.
            aligned = tuple(_aligned(b) for b in blocks)
            if all(a is b for a, b in zip(aligned, blocks)):
                raise
            return _ops._call(self.op, aligned, None, self.convention, self.algorithm,
                              calls=self.calls, memo=self.memo)

    def __reduce__(self):
        return _chunk, (_ref(self.op), self.convention, self.algorithm)

    def __dask_tokenize__(self):
        return _ref(self.op), self.convention, repr(self.algorithm)


def _aligned(block):
    return block.copy() if isinstance(block, np.ndarray) and not block.flags.aligned else block


def _ref(op) -> tuple:
    args = getattr(op, "_args", None)
    return ("op", op.name) if args is None else ("kernel", args)


_INTERNED: dict = {}   # reference -> _Chunk, one per process


def _chunk(ref, convention, algorithm) -> _Chunk:
    key = (ref, convention, algorithm)
    chunk = _INTERNED.get(key)
    if chunk is None:
        kind, what = ref
        if kind == "op":
            from stridewise.ops import builtins as _builtins

            ops = {o.name: o for o in (*_builtins.OPS.values(),
                                       *_builtins._CASTS.values())}
            op = ops[what]
        else:
            from stridewise.kernels.elementwise import ElementwiseKernel

            args, kw = what
            op = ElementwiseKernel(*args, **dict(kw))
        chunk = _INTERNED[key] = _Chunk(op, convention, algorithm)
    return chunk
