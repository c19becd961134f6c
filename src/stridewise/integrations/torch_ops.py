"""stridewise ops as torch.library custom ops: autograd, torch.compile, fake and meta tensors.

Eager calls on plain tensors never come here. The warm path declines a tensor that needs
torch's dispatcher (it requires grad with grad mode on, lives on the meta device, is a
subclass such as FakeTensor, or a dispatch mode such as make_fx's is active), and
_ops._call then sends the call here (`routed`). Dynamo traces `call` in place of the eager
entry points, which carry it as `_torchdynamo_inline` (as torch.jit and functorch mark
theirs), so a compiled graph holds the custom op and Inductor calls stridewise's kernel.

Each op is one custom op, stridewise::<name>, with one overload per pattern of tensor and
Python-number operands ("TS": x0 a tensor, x1 a number): numbers keep torch's weak
promotion and stay kernel parameters, as in eager calls. Overloads are defined on first use.
out= and in-place calls run the functional op and copy_ the result into the target, so
torch's copy_ bumps the version counter and refuses leaves that require grad in torch's words.
"""
from __future__ import annotations

import numbers
import re
import sys

import numpy as np

from stridewise.operands import arrays as _arrays
from stridewise.launch import pipeline as _ops
from stridewise.operands.dtypes import dtype_of

__all__ = ["NAMESPACE", "routed", "declines", "call", "bump", "out_strides"]

NAMESPACE = "stridewise"
_LIB = None              # the torch.library.Library every overload lives in
_DEFINED: set = set()    # (name, mask) overloads defined
_ALGORITHMS: dict = {}   # repr -> algorithm (schemas carry algorithms as strings)
_FUNCTIONS: dict = {}    # (name, mask) -> the overload's autograd.Function, for torch.func


def dual(t) -> bool:
    """Whether t carries a forward-mode AD tangent (torch.autograd.forward_ad.make_dual): such
    a tensor neither requires grad nor is wrapped, and the plain kernel would drop its tangent.
    Outside a dual level (the level unpack_dual itself reads) this is one attribute read: the
    Python warm key asks it of every tensor (meaning.torch_mark via declines)."""
    fwAD = sys.modules.get("torch.autograd.forward_ad")
    return fwAD is not None and fwAD._current_level >= 0 and fwAD.unpack_dual(t).tangent is not None


def routed(args, out) -> bool:
    """Whether an eager call goes through the custom op: a torch tensor among the arguments
    requires grad (grad mode on), is a dual tensor of forward-mode AD, a meta tensor, a
    subclass (FakeTensor, FunctionalTensor) or a functorch-wrapped tensor (vmap), a torch
    dispatch mode is active, or torch.jit.trace is recording (it records the custom op)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    outs = out if isinstance(out, (list, tuple)) else (out,)
    tensors = [x for x in (*args, *outs) if isinstance(x, torch.Tensor)]
    if not tensors:
        return False
    grad = torch.is_grad_enabled()
    for t in tensors:
        if type(t) not in (torch.Tensor, torch.nn.Parameter) or t.is_meta or grad and t.requires_grad \
                or dual(t):
            return True
        if torch._C._functorch.is_functorch_wrapped_tensor(t):   # vmap's batched tensors
            return True
    return torch._C._len_torch_dispatch_stack() > 0 or torch._C._get_tracing_state() is not None


def declines(t) -> bool:
    """Whether the warm path must leave plain tensor t to `routed`: it requires grad with grad
    mode on, is a dual tensor, is not on the CPU or a CUDA device, a dispatch mode is active,
    or torch.jit.trace is recording (what stridewise.launch._torch's sw_torch_key checks in C++)."""
    torch = sys.modules["torch"]
    return (t.requires_grad and torch.is_grad_enabled() or dual(t) or t.device.type not in ("cpu", "cuda")
            or torch._C._len_torch_dispatch_stack() > 0 or torch._C._get_tracing_state() is not None)


def can_cast(frm, to) -> bool:
    """torch.can_cast, the rule of torch's out= (no cast to a lower category: bool < integer <
    float < complex), from dtype attributes Dynamo reads as constants (it cannot trace
    torch.can_cast itself)."""
    import torch

    if frm.is_complex and not to.is_complex:
        return False
    if frm.is_floating_point and not (to.is_floating_point or to.is_complex):
        return False
    return to != torch.bool or frm == torch.bool


def bump(t) -> None:
    """Count an in-place write into torch tensor t, as torch's own ops do: autograd compares
    a saved tensor's version at backward time."""
    import torch.autograd.graph

    torch.autograd.graph.increment_version(t)


def resize_out(out, shape: tuple, strides: tuple) -> None:
    """torch's out= of another shape: resized to the result's shape and laid out as an
    allocated result would be (structured kernels' resize_out); a non-empty one with torch's
    deprecation warning."""
    import warnings

    if out.numel():
        warnings.warn(f"An output with one or more elements was resized since it had shape "
                      f"{list(out.shape)}, which does not match the required output shape "
                      f"{list(shape)}. torch deprecates this; resize it to zero elements first "
                      "(out.resize_(0)) to reuse it", UserWarning, stacklevel=4)
    out.resize_(shape)
    out.as_strided_(shape, strides)


def out_strides(shape: tuple, operands: list, common, device, alloc: str = "") -> tuple:
    """Strides of an allocated output of `shape`, computed in `common` (a torch dtype), on
    `device` (a torch.device): the eager allocation's rule (torch's TensorIterator order), so
    fakes, traced graphs and eager calls agree."""
    backend = "cuda" if device.type == "cuda" else "cpu"
    return _ops._new_strides("torch", tuple(shape), operands, dtype_of(common).name, backend,
                             alloc=alloc)[0]


def _is_kernel(op) -> bool:
    return not isinstance(op, _ops.ElementwiseOp)


def _name(op) -> str:
    return op._op_name if _is_kernel(op) else op.name


def _op_named(name: str):
    """The op behind a custom op's name (strings, not the op, cross into _ensure: Dynamo
    before torch 2.13 cannot pass a frozen dataclass to a function it runs at trace time)."""
    kernel = re.fullmatch(r".*_k(\d+)", name)
    if kernel:
        from stridewise.kernels.elementwise import _LIVE
        return _LIVE[int(kernel.group(1))]
    from stridewise.ops import builtins as _builtins, keywords as _keywords
    return {o.name: o for o in (*_builtins.OPS.values(), *_builtins._CASTS.values(),
                                *_keywords.DERIVED.values())}[name]


def _ensure(name: str, mask: str) -> str:
    """The custom op's name, defining the overload `mask` on first use. Dynamo runs this at
    trace time and keeps its answer (marked constant below)."""
    if (name, mask) not in _DEFINED:
        _define(_op_named(name), name, mask)
        _DEFINED.add((name, mask))
    return name


_ensure._dynamo_marked_constant = True   # torch._dynamo.assume_constant_result, without importing it


def _algorithm_key(algorithm) -> str | None:
    if algorithm is None:
        return None
    key = repr(algorithm)
    _ALGORITHMS.setdefault(key, algorithm)
    return key


_algorithm_key._dynamo_marked_constant = True


def _fake_view(t):
    """A View of a tensor without touching its data (fake and meta tensors have none)."""
    d = t.device
    return _arrays.View("torch", (d.type, d.index or 0), 0, tuple(t.shape), tuple(t.stride()),
                        dtype_of(t.dtype), t)


def _of_kind(x):
    """A symbolic number (torch.compile's dynamic ints and floats) as a number of its kind:
    torch types a Python number by its kind alone, and the kernel gets the value later."""
    torch = sys.modules["torch"]
    for sym, like in ((torch.SymBool, True), (torch.SymInt, 1), (torch.SymFloat, 1.0)):
        if isinstance(x, sym):
            return like
    return x


def _define(op, name: str, mask: str) -> None:
    import torch

    from stridewise.integrations.grads import FORMULAS, JVPS, SAVES

    global _LIB
    if _LIB is None:
        _LIB = torch.library.Library(NAMESPACE, "FRAGMENT")
    kernel, n, nout = _is_kernel(op), len(mask), op.nout
    params = [f"{'Tensor' if m == 'T' else 'Scalar'} x{i}" for i, m in enumerate(mask)]
    # user kernels: the given outs (their shape and dtype can decide the result's, and a
    # kernel that reads them starts from them); built-ins: the convention
    nx = nout if kernel else 1
    params += [f"Tensor? o{k}=None" for k in range(nout)] if kernel else ["str? convention=None"]
    params.append("str? algorithm=None")
    ret = "Tensor" if nout == 1 else "(" + ", ".join(["Tensor"] * nout) + ")"
    qualname = f"{NAMESPACE}::{name}.{mask}"
    _LIB.define(f"{name}.{mask}({', '.join(params)}) -> {ret}")

    def impl(*a):
        a += (None,) * (n + nx + 1 - len(a))     # defaults the dispatcher left out
        args, extra, algorithm = a[:n], a[n:n + nx], _ALGORITHMS.get(a[n + nx]) if a[n + nx] else None
        # A user's Tensor subclass arrives as itself (its __torch_function__ wraps the result
        # above this kernel): read here as a plain tensor, or the call would route back here.
        args = tuple(x.as_subclass(torch.Tensor) if isinstance(x, torch.Tensor)
                     and type(x) not in (torch.Tensor, torch.nn.Parameter) else x for x in args)
        # The inputs may require grad (autograd sits above this kernel): no_grad keeps the
        # eager path from routing back here, and lets the warm path take the call.
        with torch.no_grad():
            if not kernel:
                return _ops._call(op, args, None, extra[0], algorithm)
            outs = None
            if extra[0] is not None:    # fresh outputs for the given; read ones start as them
                views = [_fake_view(x) for x in args if isinstance(x, torch.Tensor)]
                outs = [torch.empty_strided(o.shape, out_strides(o.shape, views, o.dtype, o.device),
                                            dtype=o.dtype, device=o.device) for o in extra]
                for o, init, reads in zip(outs, extra, op._reads):
                    if reads:
                        o.copy_(init)
            return _ops._call(op, args, outs, None, algorithm, calls=op._calls, memo=op._memo)

    def fake(*a):
        a += (None,) * (n + nx + 1 - len(a))
        args, extra = a[:n], a[n:n + nx]
        operands = [_fake_view(x) if isinstance(x, torch.Tensor) else _arrays.Scalar(_of_kind(x))
                    for x in args]
        out_views = [o if o is None else _fake_view(o) for o in extra] if kernel else [None]
        _, _, typing, shape, _ = _ops._prepare(op, operands, out_views,
                                               None if kernel else extra[0], False)
        for dt, o in zip(typing.params, (o for o in operands if isinstance(o, _arrays.Scalar))):
            dt.slot_value(o.value)     # a number beyond its dtype's range raises, as eager calls do
        device = next(x.device for x in args if isinstance(x, torch.Tensor))
        strides = out_strides(shape, operands, getattr(torch, typing.compute.name), device, typing.alloc)
        outs = tuple(torch.empty_strided(shape, strides, dtype=getattr(torch, dt.name), device=device)
                     for dt in typing.outs)
        return outs[0] if nout == 1 else outs

    # Save only what the formula reads, as torch does: a later in-place write into anything
    # saved fails backward ("modified by an inplace operation").
    saves = "io" if kernel else SAVES.get(op.name, "")

    def setup_context(ctx, inputs, output):
        ctx.numbers = [None if m == "T" else x for m, x in zip(mask, inputs)]
        ctx.metas = [(x.shape, x.dtype) if m == "T" else None for m, x in zip(mask, inputs)]
        outs = output if isinstance(output, tuple) else (output,)
        ctx.save_for_backward(*(x for x in inputs[:n] if "i" in saves and isinstance(x, torch.Tensor)),
                              *(outs if "o" in saves else ()))

    def vjp(ins, outs, grads):
        """Each input's gradient, at the output's shape (the kernel's backward or the formula)."""
        if kernel:
            got = op._backward(ins, outs, grads)
            if not isinstance(got, (tuple, list)) or len(got) != n:
                raise TypeError(f"the backward of {op.name} returned {got!r}; return one gradient "
                                f"(or None) per input, {n} in all")
            return got
        formula = FORMULAS.get(op.name)
        if formula is None:
            raise RuntimeError(f"derivative for {qualname} is not implemented")
        return formula(grads[0], ins, outs[0])

    def backward(ctx, *grads):
        saved = iter(ctx.saved_tensors)
        ins = tuple((next(saved) if "i" in saves else None) if m == "T" else x
                    for m, x in zip(mask, ctx.numbers))
        got = vjp(ins, tuple(saved) or (None,), grads)
        result = [None if m == "S" or g is None or not ctx.needs_input_grad[i] else _reduce(g, *meta)
                  for i, (m, g, meta) in enumerate(zip(mask, got, ctx.metas))]
        return (*result, *[None] * (nx + 1))

    def setup_forward(ctx, inputs, output):
        setup_context(ctx, inputs, output)
        ctx.save_for_forward(*(x for x in inputs[:n] if isinstance(x, torch.Tensor)),
                             *(output if isinstance(output, tuple) else (output,)))

    def jvp(ctx, *tangents):
        # Forward mode from the same formulas: elementwise, each output's tangent is the sum
        # over inputs of the vjp with that input's tangent as the output's gradient (the
        # derivatives are real there; complex tangents would need the conjugate convention).
        saved = iter(ctx.saved_tensors)
        ins = tuple(next(saved) if m == "T" else x for m, x in zip(mask, ctx.numbers))
        outs = tuple(saved)
        special = None if kernel or op.name not in JVPS else JVPS[op.name](tangents[:n], ins, outs[0])
        if special is not None:
            return special
        result = [None] * len(outs)
        for i, t in enumerate(tangents[:n]):
            if mask[i] == "S" or t is None:
                continue
            if t.is_complex() or any(o.is_complex() for o in outs):
                raise NotImplementedError(f"{op.name}: forward-mode derivatives of complex tensors "
                                          "are not implemented; use torch.func.jacrev or vjp")
            for j, o in enumerate(outs):
                grads = [t.expand(o.shape).to(o.dtype) if k == j else torch.zeros_like(p)
                         for k, p in enumerate(outs)]
                g = vjp(ins, outs, grads)[i]
                if g is not None:
                    g = g.expand(o.shape).to(o.dtype)
                    result[j] = g if result[j] is None else result[j] + g
        result = [torch.zeros_like(o) if r is None else r for r, o in zip(result, outs)]
        return result[0] if nout == 1 else tuple(result)

    def batched(info, in_dims, *a):
        # vmap: each batched input's batch dim to the front, then ones to its logical rank's
        # left so that it broadcasts against the others as its logical shape would (an
        # unbatched input's shape already aligns to the right); the result is batched at 0.
        args, rest = list(a[:n]), a[n:]
        if any(d is not None for d in in_dims[n:]):
            raise NotImplementedError(f"{op.name}: vmap over a given out is not supported; "
                                      "let the kernel allocate its outputs")
        ranks = [x.dim() - (d is not None) for x, d in zip(args, in_dims) if isinstance(x, torch.Tensor)]
        for i, (x, d) in enumerate(zip(args, in_dims)):
            if d is not None:
                x = x.movedim(d, 0)
                args[i] = x.reshape((x.shape[0],) + (1,) * (max(ranks) - x.dim() + 1) + tuple(x.shape[1:]))
        result = getattr(getattr(getattr(torch.ops, NAMESPACE), name), mask)(*args, *rest)
        return result, (0 if nout == 1 else (0,) * nout)

    for key in ("CPU", "CUDA"):
        _LIB.impl(f"{name}.{mask}", impl, key)
    torch.library.register_fake(qualname, fake, lib=_LIB)
    torch.library.register_autograd(qualname, backward, setup_context=setup_context, lib=_LIB)
    torch.library.register_vmap(qualname, batched, lib=_LIB)
    # torch.func's grad, vjp and jacrev refuse the autograd.Function that register_autograd
    # generates (it has no setup_context staticmethod: pytorch/pytorch#168393); under those
    # transforms `call` applies this one, the same formula, instead.
    overload = getattr(getattr(getattr(torch.ops, NAMESPACE), name), mask)
    _FUNCTIONS[(name, mask)] = type(f"{name}_{mask}", (torch.autograd.Function,), dict(
        generate_vmap_rule=True, forward=staticmethod(lambda *a: overload(*a)),
        setup_context=staticmethod(setup_forward), backward=staticmethod(backward),
        jvp=staticmethod(jvp)))


def _reduce(g, shape, dtype):
    """A gradient summed over the dims its input was broadcast along, in its dtype."""
    if g.shape != shape:
        g = g.sum_to_size(shape)
    if g.is_complex() and not dtype.is_complex:
        g = g.real                  # torch's handle_r_to_c: a real input's gradient is real
    return g if g.dtype == dtype else g.to(dtype)


def traced_call(op, args, out=None, convention=None, algorithm=None, inplace=False, dry=False,
                calls=None, memo=None, index=None, stream=None):
    """What Dynamo traces for _ops._call."""
    if index is not None or stream is not None:
        raise NotImplementedError(
            f"{op.name}: a kernel that uses the loop index, raw arguments, size= or stream= "
            "runs eagerly only; call it outside the compiled function (torch.compiler.disable)")
    return call(op, args, out, convention, algorithm, inplace)


def traced(op, inplace: bool = False):
    """What Dynamo traces for a public function that starts with the warm path (remainder)."""
    def entry(*args, out=None, convention=None, algorithm=None):
        return call(op, args, out, convention, algorithm, inplace)
    return entry


def _number(x):
    """A NumPy scalar as torch reads one (arrays.torch_number). Dynamo traces one as a 0-d
    ndarray, whose value it cannot hand over as a number: refused there, with the fix."""
    import torch

    if isinstance(x, np.generic):
        return _arrays.torch_number(x)
    if isinstance(x, np.ndarray) and x.ndim == 0 and torch.compiler.is_compiling():
        raise TypeError("a NumPy scalar in a compiled function: Dynamo traces it as an array; "
                        "pass a Python number (float(s) outside the compiled function) or a tensor")
    return x


def call(op, args, out=None, convention=None, algorithm=None, inplace=False):
    """Run `op` through its torch custom op (eager with autograd or fake/meta tensors, or
    traced); out= and in-place calls write the result with copy_."""
    import torch

    kernel = _is_kernel(op)
    if len(args) != op.nin:
        raise TypeError(f"{op.name} takes {op.nin} arrays or scalars, got {len(args)}")
    mask = ""
    args = tuple(_number(x) for x in args)
    for i, x in enumerate(args):
        if isinstance(x, torch.Tensor):
            mask += "T"
        elif isinstance(x, numbers.Number):     # a schema Scalar keeps bool, int, float, complex
            mask += "S"
        else:
            raise TypeError(f"argument {i} has type {type(x).__name__}; with torch tensors that "
                            "need autograd or tracing, pass torch tensors or Python numbers")
    if "T" not in mask:
        raise ValueError("at least one argument must be an array; got only Python scalars")
    if inplace:
        targets = [args[0]]
    elif out is None:
        targets = []
    else:
        targets = list(out) if isinstance(out, (list, tuple)) else [out]
        if len(targets) != op.nout:
            raise TypeError(f"{op.name} has {op.nout} outputs; got {len(targets)} out arrays")
        if not all(isinstance(t, torch.Tensor) for t in targets):
            raise TypeError("out must be a torch tensor when the inputs are")
    tensors = [x for x in args if isinstance(x, torch.Tensor)]
    grad = torch.is_grad_enabled()
    if targets and not inplace and grad and any(t.requires_grad for t in tensors + targets):
        raise RuntimeError(f"{op.name}(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires grad.")
    if kernel and op._backward is None and grad and any(t.requires_grad for t in tensors):
        names = [nm for nm, x in zip(op.names[0], args)
                 if isinstance(x, torch.Tensor) and x.requires_grad]
        raise RuntimeError(
            f"ElementwiseKernel {op.name!r}: {', '.join(names)} requires grad, but the kernel has "
            "no backward. Give it one: ElementwiseKernel(..., backward=fn) or k.defvjp(fn), where "
            "fn(inputs, outputs, grads) returns one gradient (or None) per input; or pass "
            "x.detach(), or call it under torch.no_grad()")
    if inplace and grad and args[0].requires_grad:   # autograd may save x1, which copy_ overwrites
        args = (args[0].clone(), *args[1:])
    fn = getattr(getattr(getattr(torch.ops, NAMESPACE), _ensure(_name(op), mask)), mask)
    if grad and torch._C._are_functorch_transforms_active():
        if torch.compiler.is_compiling():
            raise NotImplementedError(
                f"{op.name}: torch.func's grad, vjp and jacrev around stridewise ops run eagerly "
                "only (Dynamo cannot trace the autograd.Function they need); apply the transform "
                "outside the compiled function, or use loss.backward() inside it")
        fn = _FUNCTIONS[(_name(op), mask)].apply
    elif any(dual(t) for t in tensors):
        # forward-mode AD: the custom op's own autograd (register_autograd) has no jvp, and its
        # kernel would meet the dual tensors again; the Function's forward runs with forward
        # grads off and its jvp gives the tangents
        fn = _FUNCTIONS[(_name(op), mask)].apply
    extra = (targets or [None] * op.nout) if kernel else [convention]
    result = fn(*args, *extra, _algorithm_key(algorithm))
    if not targets:
        return result
    for t, r in zip(targets, result if isinstance(result, tuple) else (result,)):
        if t.shape != r.shape:
            raise ValueError(f"out has shape {tuple(t.shape)} but the broadcast result is "
                             f"{tuple(r.shape)}")
        if t.dtype != r.dtype and not can_cast(r.dtype, t.dtype):
            raise TypeError(f"the result has dtype {r.dtype}, which torch's can_cast does not cast "
                            f"to out's {t.dtype}; pass an out of dtype {r.dtype}")
        t.copy_(r)     # casting where the dtypes differ, as torch's out= does
    return targets[0] if op.nout == 1 else tuple(targets)
