"""Ops: the elementwise pipeline from arguments to a launched kernel, and the built-in ops.

A call turns its arguments into operands, plans, resolves, generates, compiles and
launches. Everything after the operands depends only on the call's layout signature, so a
warm call is one dict lookup, one struct pack and one launch.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from . import _arrays, _codegen, _plan, _resolve
from ._arrays import Scalar, View
from .algorithms import Auto
from .backends import get_backend
from .capabilities import capabilities
from .tuning import elementwise_tuning

__all__ = ["ElementwiseOp", "remainder", "remainder_", "explain", "Prepared"]

CONVENTIONS = ("torch", "numpy")


@dataclass(frozen=True)
class ElementwiseOp:
    """A built-in elementwise op.

    Attributes
    ----------
    name : public name, also the kernel's.
    nin : number of inputs.
    functor : C++ functor template; "{T}" is the compute type, "{C}" the convention.
    ufunc : the NumPy ufunc whose dtype resolution the op follows.
    dtypes : compute dtypes the op supports (plain data that tests and docs enumerate).
    """

    name: str
    nin: int
    functor: str
    ufunc: str | None
    dtypes: tuple

    def functor_for(self, compute, convention: str) -> str:
        return self.functor.format(T=compute.ctype, C="sw::kTorch" if convention == "torch" else "sw::kNumpy")


REMAINDER = ElementwiseOp(
    "remainder", 2, "sw::RemainderFunctor<{T}, {C}>", "remainder",
    ("float16", "bfloat16", "float32", "float64", "int32", "int64"),
)


@dataclass
class Prepared:
    """A resolved call: everything needed to launch, and to explain it."""

    backend: str
    lib: str
    device: tuple
    plan: _plan.Plan
    layout: _plan.Layout
    algorithm: object
    spec: _codegen.KernelSpec
    source: str
    static: tuple          # slot values after the pointers: n, aux, shape, strides, periods
    record: struct.Struct  # packs pointers + static + params
    kernel: object = None
    config: object = None


_CALLS: dict = {}      # call signature -> (lib, device, compute, out dtype, shape, convention)
_MEMO: dict = {}       # (call signature, out alignment) -> Prepared
_KERNELS: dict = {}    # (backend, device, source) -> loaded kernel


def _names(op: ElementwiseOp) -> list[str]:
    return [f"x{i + 1}" for i in range(op.nin)]


def _operands(op, args):
    if len(args) != op.nin:
        raise TypeError(f"{op.name} takes {op.nin} arrays or scalars, got {len(args)}")
    return [_arrays.as_operand(a, i) for i, a in enumerate(args)]


def _signature(op, convention, algorithm, operands, out: View | None):
    def sig(o):
        if isinstance(o, View):
            return (o.lib, o.device, o.dtype.name, o.shape, o.strides, o.ptr % 16)
        return o.pytype
    return (op.name, convention, algorithm, out and sig(out), tuple(sig(o) for o in operands))


def _prepare(op, operands, names, out_view, convention, inplace):
    """Check and promote once per signature: (lib, device, compute, out dtype, shape, convention)."""
    views = [o for o in operands if isinstance(o, View)]
    vnames = [nm for o, nm in zip(operands, names) if isinstance(o, View)]
    lib, device = _arrays.resolve_backend(views, vnames)
    key = tuple(o.dtype.name if isinstance(o, View) else o.pytype for o in operands)
    compute, out_dtype = _arrays.result_dtypes(lib, op.ufunc, key)
    if compute.name not in op.dtypes:
        raise TypeError(f"{op.name} does not support {compute.name}; it computes in {', '.join(op.dtypes)}")
    shape = _plan.broadcast_shapes([v.shape for v in views], vnames)
    if inplace and shape != views[0].shape:
        raise ValueError(
            f"in-place {op.name}_ would expand {names[0]} from {views[0].shape} to {shape}; "
            f"use {op.name}(..., out=...) with an output of shape {shape}")
    if out_view is not None:
        if (out_view.lib, out_view.device) != (lib, device):
            raise ValueError(f"out is a {out_view.lib} array on {out_view.device} but the inputs are "
                             f"{lib} arrays on {device}; pass an out from the same library and device")
    conv = convention or ("torch" if lib == "torch" else "numpy")
    return lib, device, compute, out_dtype, shape, conv


def _build(op, operands, out: View, lib, device, compute, convention, algorithm) -> Prepared:
    views = [out] + [o for o in operands if isinstance(o, View)]
    params = [o for o in operands if isinstance(o, Scalar)]
    p = _plan.plan(out.shape, [(v.shape, v.strides, v.dtype.itemsize, v.ptr) for v in views],
                   nout=1, nparams=len(params))
    backend = device[0]
    caps = capabilities(backend, device)
    tuning = elementwise_tuning(backend, None, compute.name)
    alg = _resolve._resolve_elementwise(algorithm, p, tuning, caps, [v.dtype for v in views])
    layout = p.layout(alg.mode, alg.pack)
    args, na, npar = [], 1, 0
    for o in operands:
        if isinstance(o, View):
            args.append(("array", na))
            na += 1
        else:
            args.append(("param", npar))
            npar += 1
    spec = _codegen.KernelSpec(
        op=op.name, functor=op.functor_for(compute, convention), arrays=tuple(v.dtype for v in views),
        params=(compute,) * len(params), args=tuple(args), compute=compute, mode=alg.mode,
        kinds=layout.kinds, pack=layout.pack, index_bits=p.index_bits, ndim=p.ndim)
    be = get_backend(backend)
    source = _codegen.generate(spec, be.entry_point)
    periods = layout.periods or (0,) * len(views)
    static = (p.n, layout.aux, *p.shape, *(s for st in p.strides for s in st), *periods)
    prepared = Prepared(backend, lib, device, p, layout, alg, spec, source, static,
                        struct.Struct(_codegen.slot_format(spec)))
    prepared.config = be.configure(spec, p, alg, device, lib)
    return prepared


def _kernel(prepared: Prepared):
    key = (prepared.backend, prepared.device, prepared.source)
    kernel = _KERNELS.get(key)
    if kernel is None:
        be = get_backend(prepared.backend)
        artifact = be.compile(prepared.source, prepared.spec.entry, prepared.device)
        kernel = _KERNELS[key] = be.load(artifact, prepared.spec.entry, prepared.device)
    return kernel


def _call(op, args, out=None, convention=None, algorithm=None, inplace=False, dry=False):
    algorithm = Auto() if algorithm is None else algorithm
    operands = _operands(op, args)
    if inplace:
        if not isinstance(operands[0], View):
            raise TypeError(f"{op.name}_ works in place on x1, which must be an array")
        out = args[0]
    out_view = None if out is None else _arrays.as_operand(out, -1)
    if out is not None and not isinstance(out_view, View):
        raise TypeError("out must be an array")
    # Everything but the pointers is fixed by this signature: promotion, shape checks and
    # the plan run once per signature, the overlap check (pointers) on every call with out.
    sig = _signature(op, convention, algorithm, operands, out_view)
    info = _CALLS.get(sig)
    if info is None:
        if convention is not None and convention not in CONVENTIONS:
            raise ValueError(f"convention must be 'torch' or 'numpy', got {convention!r}")
        info = _prepare(op, operands, _names(op), out_view, convention, inplace)
        _CALLS[sig] = info
    lib, device, compute, out_dtype, shape, conv = info
    if out_view is None:
        out = _arrays.allocate(lib, device, shape, out_dtype)
        out_view = _arrays.as_operand(out, -1)
    else:
        _arrays.check_out(out_view, shape, out_dtype, *_inputs(op, operands))
    if out_view.size == 0 and not dry:
        return out
    key = (sig, out_view.ptr % 16)
    prepared = _MEMO.get(key)
    if prepared is None:
        prepared = _build(op, operands, out_view, lib, device, compute, conv, algorithm)
        if dry:
            return prepared
        prepared.kernel = _kernel(prepared)
        _MEMO[key] = prepared
    elif dry:
        return prepared
    ptrs = [o.ptr for o in operands if isinstance(o, View)]
    values = [dt.slot_value(o.value) for dt, o in
              zip(prepared.spec.params, (o for o in operands if isinstance(o, Scalar)))]
    slots = prepared.record.pack(out_view.ptr, *ptrs, *prepared.static, *values)
    get_backend(prepared.backend).launch(prepared.kernel, prepared.config, slots)
    return out


def _inputs(op, operands):
    pairs = [(o, nm) for o, nm in zip(operands, _names(op)) if isinstance(o, View)]
    return [o for o, _ in pairs], [nm for _, nm in pairs]


def remainder(x1, x2, /, *, out=None, convention=None, algorithm=None):
    """Elementwise remainder with the sign of the divisor, broadcast without copies.

    Parameters
    ----------
    x1, x2 : NumPy, torch or CuPy arrays, or Python numbers (at least one array).
    out : optional array of the broadcast shape and result dtype; any strides.
    convention : "torch" (a zero result keeps the dividend's sign, as torch on CUDA) or
        "numpy" (it takes the divisor's sign); default: the owning library's.
    algorithm : Auto() (default) or an explicit algorithm such as Rows(block_size=512).

    Returns
    -------
    The output array, from the same library and device as the inputs.
    """
    return _call(REMAINDER, (x1, x2), out, convention, algorithm)


def remainder_(x1, x2, /, *, convention=None, algorithm=None):
    """In-place remainder: x1 = remainder(x1, x2); x2 must broadcast to x1's shape."""
    return _call(REMAINDER, (x1, x2), None, convention, algorithm, inplace=True)


_OPS = {"remainder": (REMAINDER, False), "remainder_": (REMAINDER, True)}


def explain(op, *args, **kw):
    """Plan and resolve a call without running it.

    Returns
    -------
    Explanation with .mode, .shape, .strides, .algorithm, .source and more; it prints readably.
    """
    from ._explain import Explanation

    name = getattr(op, "__name__", op)
    if name not in _OPS:
        raise ValueError(f"explain knows {', '.join(_OPS)}; got {op!r}")
    eop, inplace = _OPS[name]
    prepared = _call(eop, args, kw.get("out"), kw.get("convention"), kw.get("algorithm"),
                     inplace=inplace, dry=True)
    return Explanation.from_prepared(eop.name, prepared)
