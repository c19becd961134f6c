"""`fuse` and `evaluate`: a Python expression of stridewise ops as one user kernel.

A fused function is traced once per argument signature (library, dtypes, which arguments
are Python numbers): each op records a call of a small preamble function that wraps the
op's own functor, converting its inputs and rounding its result exactly as the op's kernel
does (16-bit floats round on every op's store). The kernel is then one ElementwiseKernel, so
broadcasting, layouts, every mode and broadcast-invariant hoisting (_hoist) come from the
same pipeline; its per-layout caches do the rest. Products are never contracted into fmas
(--fmad=false on the GPU; the host never contracts), so a fused result is bit-identical to
the same ops run one by one.
"""
from __future__ import annotations

import ast
import functools
import numbers
import sys
import threading
from typing import Callable

import numpy as np

from stridewise.operands import arrays as _arrays
from stridewise.ops import builtins as _builtins
from stridewise.launch import pipeline as _ops
from stridewise.operands.arrays import View
from stridewise.operands.dtypes import dtype_of
from stridewise.integrations.dask import is_dask
from stridewise._typing import AlgorithmLike, Array, Operand

__all__ = ["fuse", "evaluate", "Traced"]

_LOCK = threading.RLock()
_TRACE = threading.local()


class Traced:
    """A value inside a traced function: its C expression and dtype name."""

    __array_priority__ = 1000    # NumPy scalars defer to our operators

    def __init__(self, expr: str, dtype: str):
        self.expr, self.dtype = expr, dtype

    def _op(self, name, *args):
        return _record(_builtins.OPS[name], args)

    __add__ = lambda s, o: s._op("add", s, o)            # noqa: E731
    __radd__ = lambda s, o: s._op("add", o, s)           # noqa: E731
    __sub__ = lambda s, o: s._op("subtract", s, o)       # noqa: E731
    __rsub__ = lambda s, o: s._op("subtract", o, s)      # noqa: E731
    __mul__ = lambda s, o: s._op("multiply", s, o)       # noqa: E731
    __rmul__ = lambda s, o: s._op("multiply", o, s)      # noqa: E731
    __truediv__ = lambda s, o: s._op("divide", s, o)     # noqa: E731
    __rtruediv__ = lambda s, o: s._op("divide", o, s)    # noqa: E731
    __floordiv__ = lambda s, o: s._op("floor_divide", s, o)    # noqa: E731
    __rfloordiv__ = lambda s, o: s._op("floor_divide", o, s)   # noqa: E731
    __mod__ = lambda s, o: s._op("remainder", s, o)      # noqa: E731
    __rmod__ = lambda s, o: s._op("remainder", o, s)     # noqa: E731
    __pow__ = lambda s, o: s._op("pow", s, o)            # noqa: E731
    __rpow__ = lambda s, o: s._op("pow", o, s)           # noqa: E731
    __neg__ = lambda s: s._op("negative", s)             # noqa: E731
    __abs__ = lambda s: s._op("abs", s)                  # noqa: E731
    __pos__ = lambda s: s                                # noqa: E731
    __lt__ = lambda s, o: _compare("<", s, o)            # noqa: E731
    __le__ = lambda s, o: _compare("<=", s, o)           # noqa: E731
    __gt__ = lambda s, o: _compare(">", s, o)            # noqa: E731
    __ge__ = lambda s, o: _compare(">=", s, o)           # noqa: E731
    __eq__ = lambda s, o: _compare("==", s, o)           # noqa: E731
    __ne__ = lambda s, o: _compare("!=", s, o)           # noqa: E731
    __hash__ = object.__hash__

    def __bool__(self):
        raise TypeError("a traced value has no truth value: fuse traces the function once for "
                        "all elements; use sw.where(condition, x, y) in place of if/else")


def _arg(x):
    """(C expression, promotion key) of one op argument inside a trace."""
    if isinstance(x, Traced):
        return x.expr, x.dtype
    if isinstance(x, bool):
        return ("true" if x else "false"), bool
    if isinstance(x, numbers.Integral):
        return f"{int(x)}LL", int
    if isinstance(x, numbers.Real):
        return f"{float.hex(float(x))}", float   # exact, whatever the platform's printf does
    raise TypeError(f"fuse traces its arguments only; got {type(x).__name__} inside the "
                    "function: pass every array as an argument of the fused function")


def _wrapper(key, label, body_of) -> str:
    """The name of the preamble function for `key` (sw_<op>, numbered where one op needs
    several: other types), made once per trace."""
    t = _TRACE.state
    name = t.names.get(key)
    if name is None:
        taken = set(t.names.values())
        name = f"sw_{label}"
        j = 2
        while name in taken:
            name, j = f"sw_{label}{j}", j + 1
        t.names[key] = name
        t.preamble.append(body_of(name))
    return name


def _record(op, args):
    exprs, key = zip(*(_arg(a) for a in args))
    t = _TRACE.state
    typing = op.typing(t.lib, tuple(key), (None,), t.convention)
    compute, out = typing.compute, typing.outs[0]
    m, om = _ops._opmath(compute), _ops._opmath(out)
    conv = typing.arg_types or ((compute.ctype, m),) * len(args)

    def body(name):
        params = ", ".join(f"A{j} x{j}" for j in range(len(args)))
        ins = ", ".join(f"sw::convert<{mt}>(sw::convert<{st}>(x{j}))"
                        for j, (st, mt) in enumerate(conv))
        tmpl = ", ".join(f"class A{j}" for j in range(len(args)))
        return (f"template <{tmpl}> SW_HOST_DEVICE SW_INLINE {om} {name}({params}) {{\n"
                f"  return sw::convert<{om}>(sw::convert<{out.ctype}>(sw::call_one<{typing.functor}>({ins})));\n}}")

    name = _wrapper((typing.functor, conv, out.name), op.name, body)
    return Traced(f"{name}({', '.join(exprs)})", out.name)


def _compare(sym, a, b):
    (ea, ka), (eb, kb) = _arg(a), _arg(b)
    t = _TRACE.state
    compute, _ = _arrays.result_dtypes(t.lib, None, (ka, kb))
    m = _ops._opmath(compute)

    def body(name):
        return (f"template <class A0, class A1> SW_HOST_DEVICE SW_INLINE bool {name}(A0 x0, A1 x1) {{\n"
                f"  return sw::convert<{m}>(sw::convert<{compute.ctype}>(x0)) {sym} "
                f"sw::convert<{m}>(sw::convert<{compute.ctype}>(x1));\n}}")

    label = {"<": "less", "<=": "less_equal", ">": "greater", ">=": "greater_equal",
             "==": "equal", "!=": "not_equal"}[sym]
    name = _wrapper(("compare", sym, compute.name), label, body)
    return Traced(f"{name}({ea}, {eb})", "bool")


def _tracing_call(real):
    """A stand-in for the ops' `_call` while a trace runs: traced arguments are recorded,
    anything else runs as usual (another thread's call, an op on real arrays)."""
    def call(op, args, *rest, **kw):
        if getattr(_TRACE, "state", None) is not None and any(isinstance(a, Traced) for a in args):
            if rest and rest[0] is not None or kw.get("out") is not None:
                raise TypeError("out= has no meaning inside a fused function; return the value")
            if not isinstance(op, _ops.ElementwiseOp):
                raise TypeError(f"fuse traces the built-in ops; {op.name} is a user kernel: "
                                "call it outside the fused function, or write one kernel")
            return _record(op, args)
        return real(op, args, *rest, **kw)
    return call


class _State:
    def __init__(self, lib):
        self.lib = lib
        self.convention = "torch" if lib == "torch" else "numpy"
        self.names: dict = {}
        self.preamble: list = []


class Fused:
    """A function of stridewise ops, run as one kernel per argument signature."""

    def __init__(self, fn: Callable, name: str | None = None):
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "fused")
        self._kernels: dict = {}
        self._quick: dict = {}     # _quick_signature -> kernel
        functools.update_wrapper(self, fn)

    def _signature(self, args):
        key, lib = [], None
        for j, x in enumerate(args):
            if is_dask(x):      # traced for its chunks' library and dtype; the kernel maps the blocks
                x = x._meta
            if _arrays.library_name(x) == "torch" and hasattr(x, "dtype"):
                # its dtype without its data: autograd's, functorch's and fake tensors have none
                # to read here (the kernel's call takes them through torch's dispatcher)
                lib = lib or "torch"
                key.append(dtype_of(x.dtype).name)
                continue
            if isinstance(x, numbers.Real) and _arrays.library_name(x) is None:
                key.append(bool if isinstance(x, bool) else int if isinstance(x, numbers.Integral)
                           else float)
                continue
            v = _arrays.as_operand(x, j)
            if not isinstance(v, View):
                key.append(v.pytype)
                continue
            lib = lib or v.lib
            key.append(v.dtype.name)
        if lib is None:
            raise ValueError(f"{self.name}: at least one argument must be an array")
        return lib, tuple(key)

    def kernel(self, *args):
        """The ElementwiseKernel these arguments run (traced on first use)."""
        quick = _quick_signature(args)
        k = self._quick.get(quick)
        if k is None:
            sig = self._signature(args)
            k = self._kernels.get(sig)
            if k is None:
                k = self._kernels[sig] = self._trace(*sig)
            if quick is not None:
                self._quick[quick] = k
        return k

    def _trace(self, lib, key):
        from stridewise.kernels.elementwise import ElementwiseKernel, safe_kernel_name

        decls = {bool: "bool", int: "int64", float: "float64"}
        params = [f"{decls.get(k, k)} x{j}" for j, k in enumerate(key)]
        ins = [Traced(f"x{j}", k) for j, k in enumerate(key)]
        with _LOCK:
            _TRACE.state = _State(lib)
            real_b, real_o = _builtins._call, _ops._call
            _builtins._call = _tracing_call(real_b)
            _ops._call = _tracing_call(real_o)
            try:
                result = self.fn(*ins)
                state = _TRACE.state
            finally:
                _builtins._call, _ops._call = real_b, real_o
                _TRACE.state = None
        outs = result if isinstance(result, tuple) else (result,)
        if not outs or not all(isinstance(o, Traced) for o in outs):
            raise TypeError(f"{self.name} must return a value computed from its arguments (or a "
                            "tuple of them); got " + repr(result)[:80])
        op = "\n".join(f"out{j} = {o.expr};" for j, o in enumerate(outs))
        kernel = ElementwiseKernel(", ".join(params), ", ".join(f"{o.dtype} out{j}" for j, o in enumerate(outs)),
                                   op, name=safe_kernel_name(self.name), preamble="\n".join(state.preamble),
                                   options=("--fmad=false",), return_tuple=isinstance(result, tuple))
        kernel.defvjp(self._backward)     # not a constructor argument: dask rebuilds from those
        return kernel

    def _backward(self, inputs, outputs, grads):
        """torch autograd through the fused kernel: the function again, op by op (each op
        carries torch's derivative), pulled back at the saved inputs (torch.func.vjp, which
        serves torch.func's transforms and plain backward alike)."""
        import torch

        def inexact(x):
            return isinstance(x, torch.Tensor) and (x.is_floating_point() or x.is_complex())

        wrt = [j for j, x in enumerate(inputs) if inexact(x)]
        keep = [k for k, o in enumerate(outputs) if inexact(o)]   # bool and integer results have none

        def fn(*tensors):
            args = list(inputs)
            for j, t in zip(wrt, tensors):
                args[j] = t
            outs = self.fn(*args)
            outs = outs if isinstance(outs, tuple) else (outs,)
            return tuple(outs[k] for k in keep)

        if not wrt or not keep:
            return (None,) * len(inputs)
        outs, pullback = torch.func.vjp(fn, *(inputs[j] for j in wrt))
        cotangents = tuple(torch.zeros_like(o) if grads[k] is None else grads[k]
                           for k, o in zip(keep, outs))
        got = dict(zip(wrt, pullback(cotangents)))
        return tuple(got.get(j) for j in range(len(inputs)))

    def __call__(self, *args: Operand, out: Array | None = None,
                 algorithm: AlgorithmLike | None = None) -> Array | tuple[Array, ...]:
        """Run the fused kernel: broadcast, any layout, hoisting as the algorithm says."""
        torch = sys.modules.get("torch")
        if torch is not None and torch.compiler.is_compiling():
            # Dynamo cannot trace the tracing itself: the graph takes the ops one by one (each
            # a custom op, the same results), and an out= gets them as torch's out= does
            result = self.fn(*args)
            if out is None:
                return result
            for target, r in zip(out if isinstance(out, (tuple, list)) else (out,),
                                 result if isinstance(result, tuple) else (result,)):
                target.copy_(r)
            return out
        return self.kernel(*args)(*args, out=out, algorithm=algorithm)


def _quick_signature(args):
    """What the signature depends on, read straight off NumPy arrays, torch tensors and Python
    numbers (a warm call then converts no argument to a View; None: some other type)."""
    torch = sys.modules.get("torch")
    key = []
    for x in args:
        tx = type(x)
        if tx is np.ndarray:
            key.append((tx, x.dtype, x.ndim == 0))
        elif tx is float or tx is int or tx is bool:
            key.append(tx)
        elif torch is not None and tx is torch.Tensor:
            key.append((tx, x.dtype, x.ndim == 0, x.device.type))
        else:
            return None
    return tuple(key)


def fuse(fn: Callable | None = None, *, name: str | None = None) -> Fused | Callable[[Callable], Fused]:
    """Decorate a function of stridewise ops (sw.add, sw.sin, ..., operators and comparisons
    on its arguments) so that a call runs it as one kernel, as cupy.fuse does.

    The function is traced once per argument signature (library, dtypes, Python-number
    arguments); types follow each op's own promotion, so the result is bit-identical to
    calling the ops one by one. Subexpressions of small broadcast operands are computed once
    (see Algorithm.hoist). Every array the function reads must be an argument.

    Example::

        @sw.fuse
        def norm(x, mean, var, gamma, beta):
            return (x - mean) / sw.sqrt(var + 1e-5) * gamma + beta
    """
    if fn is None:
        return lambda f: Fused(f, name)
    return Fused(fn, name)


_EVAL_FUNCS = {"sin": "sin", "cos": "cos", "exp": "exp", "log": "log", "sqrt": "sqrt",
               "abs": "abs", "where": "where", "maximum": "maximum", "minimum": "minimum",
               "fmod": "fmod", "remainder": "remainder", "pow": "pow", "fma": "fma",
               "relu": "relu", "negative": "negative"}
_BINOPS = {ast.Add: "__add__", ast.Sub: "__sub__", ast.Mult: "__mul__", ast.Div: "__truediv__",
           ast.FloorDiv: "__floordiv__", ast.Mod: "__mod__", ast.Pow: "__pow__"}
_CMPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_EVALUATED: dict = {}


def _evaluator(expr: str):
    tree = ast.parse(expr, mode="eval").body
    names = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - set(_EVAL_FUNCS)
                   - {"pi", "e"})

    def run(*values):
        env = dict(zip(names, values))
        return _eval(tree, env)

    run.__name__ = "evaluate"
    return names, Fused(run, "evaluate")


def _eval(n, env):
    import math

    import stridewise as sw

    if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)):
        return n.value
    if isinstance(n, ast.Name):
        return {"pi": math.pi, "e": math.e}.get(n.id, env.get(n.id))
    if isinstance(n, ast.BinOp) and type(n.op) in _BINOPS:
        a, b = _eval(n.left, env), _eval(n.right, env)
        if isinstance(a, Traced):
            return getattr(a, _BINOPS[type(n.op)])(b)
        return getattr(b, "__r" + _BINOPS[type(n.op)][2:])(a)
    if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
        x = _eval(n.operand, env)
        return -x if isinstance(n.op, ast.USub) else x
    if isinstance(n, ast.Compare) and len(n.ops) == 1 and type(n.ops[0]) in _CMPS:
        return _compare(_CMPS[type(n.ops[0])], _eval(n.left, env), _eval(n.comparators[0], env))
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _EVAL_FUNCS \
            and not n.keywords:
        return getattr(sw, _EVAL_FUNCS[n.func.id])(*(_eval(a, env) for a in n.args))
    raise ValueError(f"evaluate: {ast.unparse(n)!r} is not supported; it takes numbers, names, "
                     f"+ - * / // % **, comparisons and {', '.join(sorted(_EVAL_FUNCS))}")


def evaluate(expr: str, local_dict: dict | None = None, *, out: Array | None = None,
             algorithm: AlgorithmLike | None = None) -> Array | tuple[Array, ...]:
    """numexpr-style: evaluate the expression string over the arrays it names, as one fused
    kernel (see fuse). Names come from local_dict, else from the caller's locals and globals.
    """
    got = _EVALUATED.get(expr)
    if got is None:
        got = _EVALUATED[expr] = _evaluator(expr)
    names, fused = got
    if local_dict is None:
        import sys

        frame = sys._getframe(1)
        local_dict = {**frame.f_globals, **frame.f_locals}
    missing = [n for n in names if n not in local_dict]
    if missing:
        raise NameError(f"evaluate: {', '.join(missing)} not found; pass local_dict=")
    return fused(*(local_dict[n] for n in names), out=out, algorithm=algorithm)
