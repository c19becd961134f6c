"""Output layout: the strides a new output gets, by the rule of the library that owns the inputs.

A torch user's channels_last activations must come back channels_last, and a NumPy user's
F-ordered arrays F-ordered, or the next op pays for a silent layout change (and so does this
one, which then writes across the inputs' order). Each library's rule is reproduced here as
that library states it:

- torch: TensorIterator (aten/src/ATen/TensorIterator.cpp). Its fast setup first: operands of
  one shape (no broadcast, no wrapped scalar) that are all contiguous give a contiguous
  output, all channels_last a channels_last one, all non-overlapping and dense with equal
  strides those strides. Otherwise `reorder_dimensions` insertion-sorts the dims by stride,
  operand by operand (a broadcast dim abstains; equal strides put the smaller extent inner),
  and the output is dense in that order (contiguous where the order is C's). On the CPU an
  input of another dtype than the result is first cast by `.to()`, which keeps a dense
  input's strides and gives any other input dense strides in its own order.
- NumPy: first the ufunc's trivial loop (numpy/_core/src/umath/ufunc_object.c,
  `check_for_trivial_loop`, `try_trivial_single_output_loop`): one output, no input of more
  than one dim needing a cast, every input of more than zero dims of one shape, and those of
  two or more dims all C-contiguous or all F-contiguous alike (NumPy's flags: extent-1 dims
  ignored) give an output in that order (F only where F alone). Otherwise the iterator with
  order='K' (numpy/_core/src/multiarray/nditer_constr.c, `npyiter_find_best_axis_ordering`):
  a stable insertion sort on absolute strides, where C order wins a conflict between
  operands; the output is dense in that order, with positive strides.
- CuPy: its ufuncs and elementwise kernels allocate C-contiguous outputs (`_kernel.pyx`,
  `_get_out_args_from_optionals` calls `_ndarray_init(subtype, out_shape, dtype)`).

Pure functions of shapes and strides: the torch.library fake implementations call
`output_strides` too, so a traced program sees the strides the eager call returns.
"""
from __future__ import annotations

import functools
from typing import Sequence

__all__ = ["output_strides", "layout_reason", "contiguous_strides"]

Operand = tuple  # (shape, strides in elements, dtype name); a Python scalar is ((), (), name)


def contiguous_strides(shape: Sequence[int]) -> tuple:
    """C-contiguous strides in elements (an extent of 0 counts as 1, as torch and CuPy do)."""
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def _dense_in_order(shape, perm) -> tuple:
    """Dense strides with perm[0] the innermost dim (no max with 1, as both libraries write it)."""
    strides, acc = [0] * len(shape), 1
    for d in perm:
        strides[d] = acc
        acc *= shape[d]
    return tuple(strides)


def output_strides(lib: str, shape: tuple, inputs: tuple, common: str | None = None,
                   device: str = "cpu", loop_dtype: str | None = None, nout: int = 1,
                   alloc: str = "") -> tuple:
    """Strides in elements of a new output of broadcast `shape`, by `lib`'s own rule.

    Parameters
    ----------
    lib : "torch", "numpy", or "cupy" (anything else: C-contiguous).
    shape : the output's (broadcast) shape.
    inputs : per input, (shape, strides in elements, dtype name), in call order; a Python
        scalar is ((), (), its dtype name), as torch wraps it into a 0-d tensor.
    common : the name of the dtype the op computes in, torch's common dtype: on the CPU torch
        casts an input of another dtype to it first (not to a comparison's bool result).
    device : "cpu" or "cuda".
    loop_dtype : the dtype the op computes in (NumPy: an input of another dtype is cast,
        which rules out its trivial loop); None: no input is cast.
    nout : the op's outputs (NumPy's trivial loop takes one).
    alloc : where the library's op allocates otherwise (Typing.alloc): "like" its one input
        (torch's empty_like: the input's strides where it is non-overlapping and dense, else
        infer_dense_strides; NumPy's and CuPy's astype: order='K'), "contiguous";
        "unary" needs nothing here (the caller passes the first input alone); NumPy's
        order= "C", "F" or "A" (ops/keywords.py); "iterator": NumPy's nditer alone (np.where).
    """
    args = (lib, tuple(shape), inputs, common, device, loop_dtype, nout, alloc)
    try:
        return _cached_strides(*args)
    except TypeError:   # torch.compile's symbolic sizes do not hash: the same rule, uncached
        return _output_strides(*args)


def _output_strides(lib, shape, inputs, common, device, loop_dtype, nout, alloc) -> tuple:
    if alloc in ("C", "F", "A"):    # NumPy's order=: its trivial loop or its iterator, in that order
        if 0 in shape and lib == "numpy":
            return (0,) * len(shape)        # NumPy 2 gives every new empty array zero strides
        if alloc == "A":
            # the trivial loop keeps its operands' order (F only where they are F and not C);
            # the iterator takes F where every operand has the F_CONTIGUOUS flag
            trivial = _numpy_trivial(shape, inputs, loop_dtype) if nout == 1 else None
            if trivial is not None:
                return trivial
            alloc = "F" if all(_numpy_copied(s, dt, loop_dtype)
                               or _numpy_contiguity(tuple(s), tuple(st)) & _F
                               for s, st, dt in inputs if s) else "C"
        return contiguous_strides(shape[::-1])[::-1] if alloc == "F" else contiguous_strides(shape)
    if alloc == "contiguous":
        return contiguous_strides(shape)
    if alloc == "like" and inputs and tuple(inputs[0][0]) == shape and lib in ("torch", "numpy", "cupy"):
        s, st = tuple(inputs[0][0]), tuple(inputs[0][1])
        if lib != "torch":
            return _numpy_like_strides(s, st)
        return _torch_like(s, st)
    if lib == "torch":
        return _torch_strides(shape, inputs, common, device)
    if lib == "numpy":
        if 0 in shape:
            return (0,) * len(shape)        # NumPy 2 gives every new empty array zero strides
        trivial = _numpy_trivial(shape, inputs, loop_dtype) if nout == 1 and alloc != "iterator" else None
        return trivial if trivial is not None else _numpy_strides(shape, inputs)
    return contiguous_strides(shape)


_cached_strides = functools.lru_cache(maxsize=4096)(_output_strides)


def layout_reason(lib: str, shape: tuple, inputs: tuple, strides: tuple, alloc: str = "") -> str:
    """One line for `explain`: which rule chose `strides`."""
    if alloc in ("C", "F", "A"):
        rule = f"NumPy's order={alloc!r} (the order= given)"
    elif lib in ("torch", "numpy", "cupy") and alloc == "like":
        rule = "torch's empty_like of the input" if lib == "torch" else "the library's astype (order='K')"
    elif lib == "torch" and alloc == "unary":
        rule = "torch's TensorIterator over the first input (its overload taking numbers)"
    elif lib == "torch" and alloc == "real":
        rule = "torch's TensorIterator over the input's real view (its complex isinf)"
    elif lib == "torch" and alloc == "contiguous":
        rule = "torch's pow of a number (C-contiguous)"
    elif lib == "torch":
        rule = "torch's TensorIterator order"
    elif lib == "numpy":
        rule = "NumPy's order='K'"
    elif lib == "cupy":
        rule = "CuPy's rule (its ufuncs allocate C-contiguous)"
    else:
        rule = "C-contiguous (the library has no allocator of its own here)"
    kind = "C-contiguous" if strides == contiguous_strides(shape) else "inputs' order"
    return f"{strides} ({kind}), {rule}"


# -- torch ---------------------------------------------------------------------------------
def _torch_contiguous(shape, strides) -> bool:
    """TensorImpl's is_contiguous: dims of extent 1 never matter; an empty tensor is."""
    if 0 in shape:
        return True
    expected = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1:
            if s != expected:
                return False
            expected *= n
    return True


def _torch_channels_last_contiguous(shape, strides) -> bool:
    """is_contiguous(memory_format=torch.channels_last), which TensorIterator's fast setup
    asks, not suggest_memory_format: dense in N, H, W, C order, dims of extent 1 never
    matter (a (1, C, H, 1) tensor of strides (1, 1, H, HC) is, though its strides do not
    suggest channels_last)."""
    if len(shape) != 4:
        return False
    expected = 1
    for d in (1, 3, 2, 0):
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def _channels_last_strides(shape) -> tuple:
    n, c, h, w = shape
    return (h * w * c, 1, w * c, c)


def _torch_dense(shape, strides) -> bool:
    """is_non_overlapping_and_dense: the dims longer than 1, by stride, tile memory exactly."""
    if len(shape) == 1:
        return shape[0] < 2 or strides[0] == 1
    require = 1
    for n, s in sorted(((n, s) for n, s in zip(shape, strides) if n >= 2), key=lambda x: x[1]):
        if s != require:
            return False
        require *= n
    return True


def _torch_dense_strides(shape, strides) -> tuple:
    """infer_dense_strides: what `.to()` gives a tensor that is not already dense."""
    nd = len(shape)
    if nd == 0:
        return ()
    if nd == 1:
        return (1,)
    perm = list(range(nd - 1, -1, -1))

    def swap(d0, d1):
        s0, s1 = strides[d0], strides[d1]
        if s0 == 0 or s1 == 0:
            return 0
        if s0 != s1:
            return -1 if s0 < s1 else 1
        return 1 if shape[d0] > shape[d1] else 0

    _torch_sort(perm, swap)
    out, acc = [0] * nd, 1
    for d in perm:
        out[d] = acc
        if shape[d] > 1:
            acc *= shape[d]
    return tuple(out)


def _torch_like(shape, strides) -> tuple:
    """empty_like(x)'s strides (preserve_format): x's own where x is non-overlapping and
    dense, else infer_dense_strides; also what `.to()` gives a cast input."""
    return strides if _torch_dense(shape, strides) else _torch_dense_strides(shape, strides)


def _torch_sort(perm, should_swap) -> None:
    """reorder_dimensions' insertion sort: an ambiguous pair (0) is stepped over, and a swap
    exchanges the two places, leaving what was stepped over where it was."""
    for i in range(1, len(perm)):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break


def _torch_strides(shape, inputs, common, device) -> tuple:
    ops = []
    for s, st, dt in inputs:
        s, st = tuple(s), tuple(st)
        if device == "cpu" and common is not None and dt != common and s:
            st = _torch_like(s, st)
        ops.append((s, st))
    nd = len(shape)
    if nd == 0:
        return ()
    # fast setup: every operand of the output's shape (a wrapped scalar breaks it, unless all
    # are); lengths first, since a tuple compares its items before its length (a symbolic
    # size would take a guard against a shorter operand's extent)
    if all(len(s) == nd and s == shape for s, _ in ops):
        if all(_torch_contiguous(s, st) for s, st in ops):
            return contiguous_strides(shape)
        if all(_torch_channels_last_contiguous(s, st) for s, st in ops):
            return _channels_last_strides(shape)
        if all(_torch_dense(s, st) and st == ops[0][1] for s, st in ops):
            return ops[-1][1]
    # compute_strides: right-aligned, a broadcast dim (extent 1 of a longer one) has stride 0
    full = []
    for s, st in ops:
        pad = nd - len(s)
        full.append((0,) * pad + tuple(0 if n == 1 and shape[pad + i] != 1 else x
                                       for i, (n, x) in enumerate(zip(s, st))))
    perm = list(range(nd - 1, -1, -1))             # perm[0]: the fastest dim

    def swap(d0, d1):
        for st in full:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    if nd > 1:
        _torch_sort(perm, swap)
    if perm == list(range(nd - 1, -1, -1)):
        return contiguous_strides(shape)
    return _dense_in_order(shape, perm)


# -- NumPy ---------------------------------------------------------------------------------
_C, _F = 1, 2


def _numpy_contiguity(shape, strides) -> int:
    """NumPy's C_CONTIGUOUS | F_CONTIGUOUS flags (elements): extent-1 dims never matter, and
    an empty array is both."""
    if 0 in shape:
        return _C | _F
    flags = 0
    for order, dims in ((_C, range(len(shape) - 1, -1, -1)), (_F, range(len(shape)))):
        expected, ok = 1, True
        for d in dims:
            if shape[d] != 1:
                ok &= strides[d] == expected
                expected *= shape[d]
        flags |= order if ok else 0
    return flags


def _numpy_like_strides(shape, strides) -> tuple:
    """PyArray_NewLikeArray's order='K' (astype; CuPy's astype sorts alike,
    _get_strides_for_order_K): C order for a C-contiguous prototype (or one of at most one
    dim), F order for an F-contiguous one, else dense in the order of the prototype's strides
    by magnitude, largest first, ties in dim order (a stable sort)."""
    if 0 in shape:
        return (0,) * len(shape)            # NumPy 2 gives every new empty array zero strides
    flags = _numpy_contiguity(shape, strides)
    if flags & _C or len(shape) <= 1:
        return contiguous_strides(shape)
    if flags & _F:
        return _dense_in_order(shape, range(len(shape)))
    perm = sorted(range(len(shape)), key=lambda d: -abs(strides[d]))
    return _dense_in_order(shape, perm[::-1])


# NumPy's default buffer size in elements (NPY_BUFSIZE): a 1-d input of another dtype up to
# this long is cast into a contiguous copy before the ufunc chooses its loop.
_NUMPY_BUFSIZE = 8192


def _numpy_copied(shape, dtype, loop_dtype) -> bool:
    """Whether NumPy's ufunc replaces this input by a contiguous cast copy first
    (check_for_trivial_loop in ufunc_object.c): 0-d, or 1-d up to a buffer long, and of
    another dtype than the loop's. Its layout then counts as the copy's, not the view's."""
    return (loop_dtype is not None and dtype != loop_dtype
            and (len(shape) == 0 or (len(shape) == 1 and shape[0] <= _NUMPY_BUFSIZE)))


def _numpy_trivial(shape, inputs, loop_dtype) -> tuple | None:
    """The output strides of NumPy's trivial ufunc loop, or None where NumPy uses its iterator."""
    common, order = None, 0
    for s, st, dt in inputs:
        s = tuple(s)
        if not s:
            continue                        # 0-d inputs (and Python scalars) broadcast freely
        if loop_dtype is not None and dt != loop_dtype and not _numpy_copied(s, dt, loop_dtype):
            return None                     # a cast of a larger input: the iterator's buffers
        if common is None:
            common = s
        elif s != common:
            return None                     # any broadcast
        if len(s) > 1:
            flags = _numpy_contiguity(s, tuple(st))
            if not flags or (order and flags != order):
                return None
            order = flags
    if order == _F:
        return _dense_in_order(shape, range(len(shape)))
    return contiguous_strides(shape)


def _numpy_strides(shape, inputs) -> tuple:
    nd = len(shape)
    full = []
    for s, st, _ in inputs:
        pad = nd - len(s)
        # the iterator gives every extent-1 dim of an operand stride 0 (nditer_constr.c)
        full.append((0,) * pad + tuple(0 if n == 1 else x for n, x in zip(s, st)))
    perm = list(range(nd - 1, -1, -1))             # perm[0]: the innermost dim
    for i0 in range(1, nd):
        ipos, d0 = i0, perm[i0]
        for i1 in range(i0 - 1, -1, -1):
            d1 = perm[i1]
            ambiguous, swap = True, False
            for st in full:
                s0, s1 = st[d0], st[d1]
                if s0 and s1:
                    if abs(s1) <= abs(s0):
                        swap = False               # C order wins a conflict
                    elif ambiguous:
                        swap = True
                    ambiguous = False
            if not ambiguous:
                if swap:
                    ipos = i1
                else:
                    break
        if ipos != i0:
            perm[ipos + 1:i0 + 1] = perm[ipos:i0]
            perm[ipos] = d0
    return _dense_in_order(shape, perm)
