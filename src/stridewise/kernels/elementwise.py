"""User kernels: ElementwiseKernel in CuPy's form and in PyCUDA's, on the ops' pipeline.

The user's operation becomes the body of a functor with named parameters, so it compiles as
written; every mode, pack, cache and backend then comes from the same pipeline as the
built-in ops. Parameters are elements, never pointers: the plan decides how each operand is
read, which is what makes broadcasting and vectorized access free. What CuPy and PyCUDA
kernels add beyond elements (raw arrays, the flat index `i`, size=, streams, options) comes
through _usercall.
"""
from __future__ import annotations

import dataclasses
import inspect
import itertools
import re
import weakref
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from stridewise.operands import arrays as _arrays
from stridewise.codegen import source as _codegen
from stridewise.codegen import hoist as _hoist
from stridewise.launch import pipeline as _ops
from stridewise import plan as _plan
from stridewise.kernels import usercall as _usercall
from stridewise.operands.dtypes import ALL_DTYPES as DTYPES, dtype_of
from stridewise._typing import AlgorithmLike, Array, Operand
from stridewise.algorithms import Algorithm, Auto

__all__ = ["ElementwiseKernel", "C_NAMES"]

# C spellings a declaration may use, by dtype (PyCUDA declares `double *a`; CuPy accepts them too).
C_NAMES = {
    "double": "float64", "float": "float32", "half": "float16", "__half": "float16",
    "__nv_bfloat16": "bfloat16", "int": "int32", "int32_t": "int32", "long": "int64",
    "long long": "int64", "int64_t": "int64", "bool": "bool",
    "signed char": "int8", "int8_t": "int8", "unsigned char": "uint8", "uint8_t": "uint8",
    "short": "int16", "int16_t": "int16", "unsigned short": "uint16", "uint16_t": "uint16",
    "unsigned int": "uint32", "unsigned": "uint32", "uint32_t": "uint32",
    "unsigned long long": "uint64", "unsigned long": "uint64", "uint64_t": "uint64",
    # CuPy names complex64 complex<float> (thrust's); PyCUDA's header pycuda::complex<float>
    **{f"{ns}complex<{c}>": d for ns in ("", "thrust::", "pycuda::")
       for c, d in (("float", "complex64"), ("double", "complex128"))},
}
_QUALIFIERS = {"const", "volatile", "restrict", "__restrict__", "__restrict"}
_COMPOUND = {"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "++", "--"}
_TOKEN = re.compile(r"""
    (?P<skip>\s+|//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')
  | (?P<ident>[A-Za-z_]\w*)
  | (?P<number>\.?\d(?:[eEpP][-+]|[\w.])*)
  | (?P<op><<=|>>=|\+\+|--|->|::|&&|\|\||<<|>>|[-+*/%&|^<>!=]=|\S)
""", re.S | re.X)


def _tokens(code: str) -> list[tuple[str, int]]:
    """(text, offset) of every token, comments and literals dropped."""
    return [(m.group(), m.start()) for m in _TOKEN.finditer(code) if not m.group("skip")]


def _line(code: str, pos: int) -> int:
    return code.count("\n", 0, pos) + 1


@dataclass(frozen=True)
class _Param:
    name: str
    letter: str | None     # placeholder (CuPy's one-letter type), or
    dtype: str | None      # a fixed dtype name
    output: bool
    raw: bool = False      # the whole array, indexed by hand (CuPy's raw; PyCUDA's pointers)

    @property
    def type_text(self) -> str:
        return self.letter or self.dtype


def _dtype_name(text: str, who: str) -> str:
    name = C_NAMES.get(text, text)
    if name not in DTYPES:
        raise TypeError(
            f"unknown dtype {text!r} for {who}: use a one-letter placeholder (T), a dtype name "
            f"({', '.join(DTYPES)}) or a C name ({', '.join(sorted(C_NAMES))})")
    return name


# C++ keywords and alternative tokens: a parameter so named would not compile, or not mean
# what it says (a parameter `and` is the operator &&)
_CPP_KEYWORDS = frozenset("""alignas alignof and and_eq asm auto bitand bitor bool break case catch
    char char8_t char16_t char32_t class compl concept const consteval constexpr constinit
    const_cast continue co_await co_return co_yield decltype default delete do double
    dynamic_cast else enum explicit export extern false float for friend goto if inline int long
    mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public
    register reinterpret_cast requires return short signed sizeof static static_assert
    static_cast struct switch template this thread_local throw true try typedef typeid typename
    union unsigned using virtual void volatile wchar_t while xor xor_eq""".split())


_KERNEL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def safe_kernel_name(text: str) -> str:
    """`text` made a valid kernel name (a fused function's __name__ may be '<lambda>')."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", str(text)) or "kernel"
    return name if _KERNEL_NAME.fullmatch(name) else "_" + name


def _check_name(name: str, decl: str) -> None:
    if not name.isidentifier() or name == "i" or name.startswith("_"):
        raise ValueError(f"bad parameter name in {decl!r}: names are C identifiers, not i and "
                         "not starting with _ (those are reserved)")
    if name in _CPP_KEYWORDS:
        raise ValueError(f"bad parameter name in {decl!r}: {name} is a C++ keyword; rename the "
                         "parameter")


def _check_placeholder(text: str, decl: str) -> None:
    if not ("A" <= text <= "Z" or "a" <= text <= "z"):
        raise ValueError(f"cannot parse parameter {decl!r}: a one-character type is a placeholder "
                         "letter (as T in 'T x'); write a letter or a dtype name")


def _parse_cupy(params: str, output: bool) -> list[_Param]:
    out = []
    for decl in filter(None, (d.strip() for d in params.split(","))):
        words = decl.split()
        raw = "raw" in words
        words = [w for w in words if w not in _QUALIFIERS and w not in ("_non_const", "raw")]
        if len(words) < 2:
            raise ValueError(f"cannot parse parameter {decl!r}: write '<type> <name>', e.g. 'T x'")
        name, text = words[-1], " ".join(words[:-1])
        _check_name(name, decl)
        if len(text) == 1:
            _check_placeholder(text, decl)
            out.append(_Param(name, text, None, output, raw))
        else:
            out.append(_Param(name, None, _dtype_name(text, name), output, raw))
    return out


def _parse_pycuda(arguments: str) -> list[tuple[str, str, bool]]:
    """(name, type, is_array) per C declarator, as PyCUDA's `double *a, float b`; the type is
    a dtype name, or a one-letter placeholder as in the CuPy form."""
    out = []
    for decl in filter(None, (d.strip() for d in arguments.split(","))):
        is_array = "*" in decl or "[" in decl
        words = [w for w in re.sub(r"[*\[\]]", " ", decl).split() if w not in _QUALIFIERS]
        if len(words) < 2:
            raise ValueError(f"cannot parse argument {decl!r}: write a C declarator, e.g. 'double *a'")
        name = words[-1]
        _check_name(name, decl)
        text = " ".join(words[:-1])
        if len(text) == 1:
            _check_placeholder(text, decl)
        out.append((name, text if len(text) == 1 else _dtype_name(text, name), is_array))
    return out


def _top_level_writes(toks, name: str) -> tuple[bool, bool]:
    """(assigned, read): whether `name` gets a plain `name = ...;` as a statement of its own at
    the top level (so every element is written), and whether any use could read it."""
    depth, assigned, read = 0, False, False
    for j, (t, _) in enumerate(toks):
        if t in "({[":
            depth += 1
        elif t in ")}]":
            depth -= 1
        if t != name:
            continue
        nxt = toks[j + 1][0] if j + 1 < len(toks) else ""
        prev = toks[j - 1][0] if j else ";"
        if nxt == "=":
            assigned |= depth == 0 and prev in (";", "}")
        else:
            read = True
    return assigned, read or not assigned


def _rewrite_pycuda(operation: str, arrays: set[str], all_raw: bool = False):
    """(body, raw arrays): `a[i]` becomes `a`, the element, for each array used only that way;
    an array used any other way (a[i + 1], a[n - i], *a) stays whole, a raw array indexed by
    hand as PyCUDA's pointer would be (all of them with `all_raw`)."""
    toks = _tokens(operation)

    def element(j):
        return [x for x, _ in toks[j + 1:j + 4]] == ["[", "i", "]"]

    raw = set(arrays) if all_raw else {t for j, (t, _) in enumerate(toks) if t in arrays and not element(j)}
    out, last = [], 0
    for j, (t, pos) in enumerate(toks):
        if t in arrays and t not in raw and element(j):
            out.append(operation[last:pos] + t)
            last = toks[j + 3][1] + 1
    out.append(operation[last:])
    return "".join(out), raw


def _uses_index(*codes: str) -> bool:
    """Whether user code names the flat index `i` or the loop `_ind`."""
    return any(t in ("i", "_ind") for code in codes for t, _ in _tokens(code))
@dataclass(frozen=True)
class _Source:
    """A user kernel's own text, to show compile errors in its own terms."""

    title: str
    operation: str
    preamble: str
    loop_prep: str = ""
    after_loop: str = ""

    _DIAG = re.compile(r"^(operation|preamble|loop_prep|after_loop)(?::(\d+)(?::\d+)?|\((\d+)\)):\s*(.*)$")

    def message(self, log: str) -> str:
        diags = []
        for line in log.splitlines():
            m = self._DIAG.match(line.strip())
            if m:
                diags.append((m[1], int(m[2] or m[3]), m[4]))
        lines = [f"{self.title} does not compile:"]
        if diags:
            lines += [f"  {f} line {n}: {msg}" for f, n, msg in diags[:12]]
        else:  # the error is outside the user's text (a type the operation cannot take, say)
            lines += ["  " + x.strip() for x in log.splitlines() if "error" in x][:8]
        for label, text in (("operation", self.operation), ("preamble", self.preamble),
                            ("loop_prep", self.loop_prep), ("after_loop", self.after_loop)):
            if label != "operation" and not any(f == label for f, _, _ in diags):
                continue
            bad = {n for f, n, _ in diags if f == label}
            lines.append(f"{label}:")
            lines += [f"  {'>' if n in bad else ' '}{n:4d} | {x}"
                      for n, x in enumerate(text.split("\n"), 1)]
        return "\n".join(lines)


_COUNTER = itertools.count()
_LIVE: "weakref.WeakValueDictionary[int, ElementwiseKernel]" = weakref.WeakValueDictionary()  # by _id
_UNDECIDED = "{}: the loop size is undecided: every array argument is raw, so pass size="


def _cupy_form(in_params, out_params, operation, name="kernel", reduce_dims=True, preamble="",
               no_return=False, return_tuple=False, *, options=None, loop_prep="", after_loop="",
               broadcasting=True):
    pass


def _pycuda_form(arguments, operation, name="kernel", keep=False, options=None, preamble="",
                 loop_prep="", after_loop="", *, broadcasting=True, no_return=False,
                 return_tuple=False):
    pass


_FORMS = {"cupy": inspect.signature(_cupy_form), "pycuda": inspect.signature(_pycuda_form)}
# A loop_prep / after_loop runs once per element here (there is no per-thread loop to put it
# around), which equals CuPy's placement wherever the result does not depend on how elements
# are spread over threads; code that names the threads or their shared memory cannot run so.
_THREAD_WORDS = {"threadIdx", "blockIdx", "blockDim", "gridDim", "__shared__", "__syncthreads",
                 "__syncwarp", "warpSize"}


def _form(args, kwargs) -> tuple[str, dict]:
    """Which form the constructor's arguments are in, and its fields by name."""
    first = args[0] if args else kwargs.get("in_params", "")
    pycuda = "arguments" in kwargs or (isinstance(first, str) and ("*" in first or "[" in first)
                                       and "out_params" not in kwargs)
    form = "pycuda" if pycuda else "cupy"
    try:
        bound = _FORMS[form].bind(*args, **kwargs)
    except TypeError as e:
        spelled = {"cupy": "CuPy form, ElementwiseKernel(in_params, out_params, operation, ...)",
                   "pycuda": "PyCUDA form, ElementwiseKernel(arguments, operation, name, ...)"}
        raise TypeError(f"{spelled[form]}: {e}") from None
    bound.apply_defaults()
    return form, dict(bound.arguments)


class ElementwiseKernel:
    """A user elementwise kernel over broadcast, strided arrays, in CuPy's or PyCUDA's form.

    CuPy's form, with CuPy's arguments (in_params, out_params, operation, name='kernel',
    reduce_dims=True, preamble='', no_return=False, return_tuple=False, options=(),
    loop_prep='', after_loop='')::

        k = ElementwiseKernel("T x, float32 alpha", "T z", "z = alpha * x + 1", name="axpy1")
        z = k(x, 2.0)                 # out allocated; or k(x, 2.0, z) / k(x, 2.0, out=z)

    PyCUDA's form, with PyCUDA's arguments (arguments, operation, name='kernel', keep=False,
    options=None, preamble='', loop_prep='', after_loop=''); all arguments are passed in
    declaration order, arrays assigned as name[i] are the outputs and name[i] means the
    element; an array used any other way (a[i + 1], a[n - i - 1]) is raw, the whole array::

        k = ElementwiseKernel("double *out, double *a", "out[i] = sin(a[i])", broadcasting=True)
        k(out, a)

    Parameters
    ----------
    in_params, out_params : comma-separated "[raw] <type> <name>". A one-letter type is a
        placeholder bound by the arguments' dtypes (the same letter means the same dtype;
        outputs bind first, then arrays, then NumPy scalars with their own dtype, then Python
        numbers as bool, int64 or float64); longer types are dtype names (float16, bfloat16,
        float32, float64, int8 ... int64, uint8 ... uint64, bool) or C names (half, float,
        double, int, long long, int8_t, unsigned char, uint64_t, bool, ...). An array whose dtype differs from a fixed type is converted in registers.
        Scalars, Python or NumPy (with any library's arrays), are host parameters of their
        parameter's type, as CuPy types them. `raw` passes the whole array, indexed by hand as
        CuPy's CArray: x[j] at C-order flat index j of x's own shape, x[idx] at a multi-index,
        x.size(), x.shape(), x.strides() (bytes).
    operation : C++ statements over the parameter names; each output is a local the kernel
        stores. Write each output once with a top-level `z = ...;` to keep it write-only;
        otherwise (a compound assignment, a read, an assignment under a condition) the output
        is loaded first, as CuPy's references would read it. `i` is the element's C-order
        flat index over the broadcast shape and `_ind.size()` the element count; a kernel that
        names them still broadcasts its other arguments without copies.
    name : kernel name (entry points, error messages): a C identifier, as CuPy requires
        (another name is a ValueError).
    preamble : C++ before the kernel (helper functions; `__device__` is accepted on the CPU);
        the placeholders are typedefs before it, as in CuPy.
    options : NVRTC flags; -D/-U macros reach g++ too (through the source), -O levels are
        accepted, other flags reach NVRTC only (an unknown flag is an error).
    loop_prep, after_loop : statements before and after the operation, in its scope, run once
        per element (there is no per-thread loop); code naming threads or shared memory is
        refused.
    no_return, return_tuple : a call returns None, or always a tuple of the outputs.
    broadcasting : arguments broadcast, NumPy style (default). False requires equal shapes.
    reduce_dims, keep : accepted; dims are always merged, and every build stays in the cache.

    A call takes size= (the loop's length when every array argument is raw), stream= (a
    CuPy, torch, cuda.core or PyCUDA stream, or a raw handle; the host runs a call to the end
    before returning), block_size= (the algorithm's block_size field), algorithm=, out=, and
    in the PyCUDA form range= / slice= (i runs over that range; every array is then raw).
    backward : gradients for torch autograd, as `defvjp` takes them. Without one, a call
        whose torch input requires grad raises (it never drops the gradient silently).

    Inputs and outputs broadcast together; the output shape is the broadcast of every
    argument, and an out of another shape is an error. 16-bit floats compute in float32
    (the placeholder's C type is float) and round once on store.
    """

    broadcast_outputs = True

    def __init__(self, *args: object, **kwargs: object) -> None:
        backward = kwargs.pop("backward", None)
        form, f = _form(args, kwargs)
        name, operation = f["name"], f["operation"]
        if form == "pycuda" and f["operation"] is None:
            raise TypeError("ElementwiseKernel(arguments, operation, ...): operation is missing")
        for field in ("loop_prep", "after_loop"):
            words = _THREAD_WORDS.intersection(t for t, _ in _tokens(f[field] or ""))
            if words:
                raise ValueError(
                    f"{field} uses {', '.join(sorted(words))}: stridewise runs {field} once per "
                    "element (there is no per-thread loop), so code that depends on threads or "
                    "shared memory cannot run; write it as per-element code (block-level "
                    "cooperation needs a hand-written CUDA kernel)")
        self._loop_prep, self._after_loop = f["loop_prep"] or "", f["after_loop"] or ""
        self._defines, self._nvrtc = _usercall.compile_options(f["options"])
        self.no_return, self.return_tuple = bool(f["no_return"]), bool(f["return_tuple"])
        self._fields = f
        if form == "pycuda":
            self._init_pycuda(f["arguments"], operation)
        else:
            if operation is None:
                raise TypeError("ElementwiseKernel(in_params, out_params, operation): operation is "
                                "missing (the PyCUDA form declares arrays as pointers, 'double *a')")
            self._pycuda = None
            self._inputs = _parse_cupy(f["in_params"], False)
            self._outputs = _parse_cupy(f["out_params"], True)
            self._body = operation
            self._index_i = ""
        names = [p.name for p in self._inputs + self._outputs]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"parameter names repeat: {', '.join(sorted(dup))}")
        preamble = f["preamble"] or ""
        if not _KERNEL_NAME.fullmatch(str(name)):
            raise ValueError(f"Invalid kernel name: {str(name)!r}: a kernel name is a C identifier "
                             "(ASCII letters, digits and _, not starting with a digit), as CuPy "
                             "requires")
        self.name = str(name)
        self.operation, self.preamble, self.broadcasting = operation, preamble, f["broadcasting"]
        self._layout()
        self._indexed = _uses_index(self._body, self._loop_prep, self._after_loop) or bool(self._index_i)
        # one output, no raw arrays, no index: a call may go straight to the warm path
        self._plain = (not self._has_raw and not self._indexed and len(self._outputs) == 1
                       and not self._outputs[0].raw and not self.no_return and not self.return_tuple)
        toks = _tokens(self._loop_prep + "\n" + self._body + "\n" + self._after_loop)
        self._reads = tuple(_top_level_writes(toks, p.name)[1] for p in self._ops_outs)
        self._source = _Source(f"ElementwiseKernel {self.name!r}", operation, preamble,
                               self._loop_prep, self._after_loop)
        self._calls, self._memo = {}, {}
        self._ranged = None
        self._id = next(_COUNTER)
        _LIVE[self._id] = self
        # its torch custom op's name, a string: torch.compile(dynamic=True) traces ints as sizes
        self._op_name = f"{self.name}_k{self._id}"
        self._backward = backward
        # what rebuilds this kernel in another process (dask workers)
        self._args = (args, tuple((k, tuple(v) if isinstance(v, list) else v)
                                  for k, v in sorted(kwargs.items())))

    def defvjp(self, backward):
        """Give the kernel a backward for torch autograd (also usable as a decorator).

        `backward(inputs, outputs, grads)` gets the call's inputs (tensors or numbers) and
        outputs, and the gradient of each output, as tuples in declaration order; it returns
        one gradient per input, or None for none. It may use torch or stridewise ops.
        """
        self._backward = backward
        return backward

    def _init_pycuda(self, arguments: str, operation: str, all_raw: bool = False) -> None:
        decls = _parse_pycuda(arguments)
        arrays = {n for n, _, is_array in decls if is_array}
        body, raw = _rewrite_pycuda(operation, arrays, all_raw)
        toks = _tokens(body)
        written = {t for j, (t, _) in enumerate(toks) if t in arrays and j + 1 < len(toks)
                   and (toks[j + 1][0] in _COMPOUND or toks[j + 1][0] == "=")
                   or t in arrays and j and toks[j - 1][0] in ("++", "--")}
        if not written and not raw:
            raise ValueError("the operation assigns no array: write, e.g., out[i] = ...; arrays "
                             "assigned as name[i] are the kernel's outputs")
        self._inputs, self._outputs = [], []
        for name, text, _ in decls:
            letter = text if len(text) == 1 else None
            p = _Param(name, letter, None if letter else text, name in written and name not in raw,
                       name in raw)
            (self._outputs if p.output else self._inputs).append(p)
        self._decls = [n for n, _, _ in decls]
        self._pycuda = [n in written and n not in raw for n in self._decls]
        self._index_i = ""
        if all_raw:   # range= / slice=: i runs over the range, from hidden host parameters
            self._inputs += [_Param("_start", None, "int64", False), _Param("_step", None, "int64", False)]
            self._index_i = "_start + _ind.index * _step"
        self._body = body

    def _layout(self) -> None:
        """The pipeline's view: inputs (declared inputs, then raw outputs, which are handed
        over whole like raw inputs), outputs (the others), and the functor's argument order."""
        raw_outs = [p for p in self._outputs if p.raw]
        self._ops_ins = list(self._inputs) + raw_outs
        self._ops_outs = [p for p in self._outputs if not p.raw]
        where = {id(p): ("in", j) for j, p in enumerate(self._ops_ins)}
        where.update({id(p): ("out", k) for k, p in enumerate(self._ops_outs)})
        if self._pycuda is not None:   # declaration order, then range='s hidden parameters
            by_name = {p.name: p for p in self._inputs + self._outputs}
            params = [by_name[n] for n in self._decls] + [
                p for p in self._inputs if p.name.startswith("_")]
        else:
            params = self._inputs + self._outputs
        self._functor = [(p, where[id(p)]) for p in params]
        self.nin, self.nout = len(self._ops_ins), len(self._ops_outs)
        self._has_raw = any(p.raw for p in self._ops_ins)
        self._plain = False   # set by __init__ once the index is known

    # -- the op protocol _ops._call drives --------------------------------------------
    @property
    def names(self):
        return [p.name for p in self._ops_ins], [p.name for p in self._ops_outs]

    def _bind(self, key, out_key) -> dict:
        """Placeholder -> dtype: outputs first, then arrays (raw too), then NumPy scalars (their
        dtype), then Python numbers (bool, int64, float64). A scalar never binds a placeholder
        an array bound: CuPy gives it the array's type."""
        bound = {}

        def bind(p, dt, what):
            have = bound.setdefault(p.letter, dt)
            if have is not dt:
                raise TypeError(f"{self.name}: {p.name} is {what} {dt.name} but {p.letter} is "
                                f"already {have.name}; the same placeholder means the same dtype")

        for p, k in zip(self._ops_outs, out_key):
            if k is not None and p.letter:
                bind(p, DTYPES[k], "an out of dtype")
        for p, k in zip(self._ops_ins, key):
            if isinstance(k, _usercall.RawType):
                if p.letter:
                    bind(p, k.dtype, "a raw array of dtype")
                elif k.dtype.name != p.dtype:
                    raise TypeError(f"{self.name}: raw {p.name} is declared {p.dtype} but the array "
                                    f"is {k.dtype.name}; a raw array is not converted: pass "
                                    f"{p.dtype} or declare a placeholder")
            elif isinstance(k, str) and p.letter:
                bind(p, DTYPES[k], "an array of dtype")
        for numpy_pass in (True, False):
            for p, k in zip(self._ops_ins, key):
                if (isinstance(k, type) and p.letter and p.letter not in bound
                        and issubclass(k, np.generic) == numpy_pass):
                    bound[p.letter] = dtype_of(np.dtype(k)) if numpy_pass else DTYPES[
                        {bool: "bool", int: "int64", float: "float64"}[k]]
        return bound

    def typing(self, lib, key, out_key, convention) -> _ops.Typing:
        """Bind placeholders and type the call (see _bind)."""
        for p, k in zip(self._ops_ins, key):
            if p.raw != isinstance(k, _usercall.RawType):
                raise TypeError(f"{self.name}: {p.name} is {'raw' if p.raw else 'not raw'} but got "
                                f"{'a scalar' if p.raw else 'a raw array'}; pass "
                                f"{'an array' if p.raw else 'an array or a scalar'}")
        bound = self._bind(key, out_key)
        for p in self._ops_outs:
            if p.letter and p.letter not in bound:
                raise TypeError(f"{self.name}: output {p.name} has type {p.letter}, which no input "
                                "determines; pass the outputs (out=...) to fix it")
        math = {name: _ops._opmath(dt) for name, dt in DTYPES.items()}
        ins = [k if isinstance(k, _usercall.RawType) else bound[p.letter] if p.letter else DTYPES[p.dtype]
               for p, k in zip(self._ops_ins, key)]
        outs = tuple(bound[p.letter] if p.letter else DTYPES[p.dtype] for p in self._ops_outs)
        ctypes = [dt.ctype if isinstance(dt, _usercall.RawType) else p.letter or math[dt.name]
                  for p, dt in zip(self._ops_ins, ins)]
        octypes = [p.letter or math[dt.name] for p, dt in zip(self._ops_outs, outs)]
        params = [(ctypes[j] if src == "in" else octypes[j], p.name, src == "out")
                  for p, (src, j) in self._functor]
        order = tuple(w for _, w in self._functor)
        prelude = ""
        if self._indexed:
            params.append(("sw::Indexer", "_ind", False))
            order += (("index", 0),)
            prelude = f"  const ptrdiff_t i = {self._index_i or '_ind.index'};\n"
        typedefs = sorted((letter, math[dt.name]) for letter, dt in bound.items())
        preamble = "#include <stridewise/user.h>\n" + (self._defines + "\n" if self._defines else "")
        # the placeholders before the user's preamble, as CuPy defines them
        preamble += "".join(f"typedef {c} {letter};\n" for letter, c in typedefs)
        if self.preamble:
            preamble += _codegen.user_block("preamble", self.preamble) + "\n"
        preamble += _codegen.user_functor(params, self._body, (), prelude, self._loop_prep,
                                          self._after_loop)
        arrays = [dt for dt, k in zip(ins, key) if isinstance(k, str)]
        compute = outs[0] if outs else arrays[0] if arrays else DTYPES["int64"]
        return _ops.Typing(
            compute=compute, outs=outs,
            params=tuple(dt if isinstance(dt, _usercall.RawType) else dt.wrapping()
                         for dt, k in zip(ins, key) if not isinstance(k, str)),
            functor="UserOp",
            arg_types=tuple((dt.ctype, dt.ctype) if isinstance(dt, _usercall.RawType)
                            else (dt.ctype, math[dt.name]) for dt in ins),
            out_types=tuple(math[dt.name] for dt in outs), reads=self._reads,
            order=order, preamble=preamble, label=self._source, options=self._nvrtc)

    # -- calls -------------------------------------------------------------------------
    def _wrap(self, p, x):
        if p.raw:
            if isinstance(x, _arrays.Scalar):
                return x
            v = _arrays.as_operand(x, p.name)
            if not isinstance(v, _arrays.View):
                raise TypeError(f"{self.name}: {p.name} is raw, so it takes an array; got {x!r}")
            return _usercall.RawArray(v)
        return _usercall.as_scalar(x)

    def _split(self, args, out, size):
        """(pipeline inputs, pipeline outputs or None, declared outputs with None where the
        pipeline allocates)."""
        if self._pycuda is not None:
            names = self._decls + [p.name for p in self._inputs if p.name.startswith("_")]
            if len(args) != len(names) or out is not None:
                raise TypeError(f"{self.name} takes its {len(self._decls)} arguments in "
                                "declaration order, outputs included (PyCUDA form)")
            by = dict(zip(names, args))
            ins = [self._wrap(p, by[p.name]) for p in self._inputs]
            outs = [by[p.name] for p in self._outputs]
            return ins, outs, outs
        nin, nout = len(self._inputs), len(self._outputs)
        if len(args) == nin + nout and nout and out is None:
            args, out = args[:nin], list(args[nin:])
        elif len(args) != nin:
            raise TypeError(f"{self.name} takes {nin} inputs (and optionally its {nout} outputs), "
                            f"got {len(args)} arguments")
        if out is not None and not isinstance(out, (tuple, list)):
            out = [out]
        if out is not None and len(out) != nout:
            raise TypeError(f"{self.name} has {nout} outputs; got {len(out)} out arrays")
        ins = [self._wrap(p, x) for p, x in zip(self._inputs, args)]
        given = out is not None
        if not given and any(p.raw for p in self._outputs):
            out = self._allocate_raw(ins, size)
        declared = list(out) if out is not None else [None] * nout
        ins += [self._wrap(p, o) for p, o in zip(self._outputs, declared) if p.raw]
        outs = [o for p, o in zip(self._outputs, declared) if not p.raw]
        return ins, (outs if given else None), declared

    def _allocate_raw(self, ins, size):
        """CuPy allocates raw outputs of shape (size,) when size= is given."""
        raw = [p.name for p in self._outputs if p.raw]
        if size is None:
            if not any(not p.raw and not isinstance(x, _arrays.Scalar)
                       and _arrays.library_name(x) is not None for p, x in zip(self._inputs, ins)):
                raise ValueError(_UNDECIDED.format(self.name))
            raise ValueError(f"{self.name}: raw output {raw[0]} has no shape; pass the outputs, "
                             "or size= to allocate them 1-d")
        ops = [_arrays.as_operand(x, p.name) for p, x in zip(self._inputs, ins)]
        views = [o.value if isinstance(o, _usercall.RawArray) else o for o in ops]
        views = [v for v in views if isinstance(v, _arrays.View)]
        lib, device = _arrays.resolve_backend(views, [p.name for p in self._inputs])
        key = [o.pytype if isinstance(o, _arrays.Scalar) else o.dtype.name for o in ops]
        bound = self._bind(key, (None,) * len(self._ops_outs))
        out = []
        for p in self._outputs:
            if p.letter and p.letter not in bound:
                raise TypeError(f"{self.name}: output {p.name} has type {p.letter}, which no input "
                                "determines; pass the outputs to fix it")
            dt = bound[p.letter] if p.letter else DTYPES[p.dtype]
            out.append(_arrays.allocator(lib, device, (size,), dt)()[0] if p.raw else None)
        return out

    def _loop(self, ins, outs, size):
        """The flat index operand, where the call needs one (the operation names i or _ind,
        size= sets the loop, or there is no output to walk); checks size= as CuPy does."""
        views, raws, names = [], [], []
        for p, x in zip(self._ops_ins, ins):
            if isinstance(x, _usercall.RawArray):
                raws.append(x.value)
            elif not isinstance(x, _arrays.Scalar) and _arrays.library_name(x) is not None:
                views.append(_arrays.as_operand(x, p.name))
                names.append(p.name)
        for p, o in zip(self._ops_outs, outs or ()):
            views.append(_arrays.as_operand(o, p.name))
            names.append(p.name)
        if size is not None and views:
            raise ValueError(f"{self.name}: size= can be given only when every array argument is "
                             f"raw, and {names[0]} is not; drop size= (the loop covers the "
                             "broadcast of the non-raw arrays)")
        if size is None and not views:
            if self._pycuda is not None and raws:   # PyCUDA's loop: the first array's size
                size = raws[0].size
            else:
                raise ValueError(_UNDECIDED.format(self.name))
        if size is not None and (not isinstance(size, (int, np.integer)) or size < 0):
            raise ValueError(f"size={size!r}: the loop's length is an int >= 0")
        lib, device = _arrays.resolve_backend(views + raws, names + ["raw argument"] * len(raws))
        if not (self._indexed or size is not None or not self._ops_outs):
            return None
        shape = (int(size),) if size is not None else _plan.broadcast_shapes(
            [v.shape for v in views], names)
        return _usercall.index_view(shape, lib, device)

    def __call__(self, *args: Operand, out: Array | Sequence[Array] | None = None,
                 algorithm: AlgorithmLike | None = None, size: int | None = None,
                 stream: object = None, block_size: int | None = None, range: object = None,
                 slice: object = None) -> Array | tuple[Array, ...] | None:
        """Run the kernel; returns its output, a tuple of outputs when there are several (or
        return_tuple), or None (no_return)."""
        if self._plain and size is None and stream is None and block_size is None \
                and range is None and slice is None:
            # the common call first: the warm path with the arguments as given (a NumPy or
            # bool scalar, or anything new, falls through to the full path)
            if self._pycuda is not None:
                if len(args) == len(self._pycuda) and out is None:
                    r = _ops._warm_user(self, [a for a, o in zip(args, self._pycuda) if not o],
                                        [a for a, o in zip(args, self._pycuda) if o],
                                        algorithm, self._calls)
                    if r is not None:
                        return r
            else:
                nin = len(self._inputs)
                if len(args) == nin + 1 and out is None:
                    args, out = args[:nin], args[nin:]
                if len(args) == nin:
                    r = _ops._warm_user(self, args, out, algorithm, self._calls)
                    if r is not None:
                        return r
        if range is not None or slice is not None:
            return self._range_kernel()._run(args, out, algorithm, None, stream, block_size,
                                             (range, slice))
        return self._run(args, out, algorithm, size, stream, block_size)

    def _run(self, args, out, algorithm, size, stream, block_size, ranged=None, dry=False):
        algorithm = _with_block_size(algorithm, block_size)
        handle = None if stream is None else _usercall.stream_handle(stream)
        if ranged is not None:
            if len(args) != len(self._decls) or out is not None:
                raise TypeError(f"{self.name} takes its {len(self._decls)} arguments in "
                                "declaration order, outputs included (PyCUDA form)")
            first = next((_arrays.as_operand(a, n) for a, n in zip(args, self._decls)
                          if _arrays.library_name(a) is not None), None)
            if first is None:
                raise ValueError(f"{self.name}: range= and slice= need an array argument")
            start, step, size = _usercall.loop_range(*ranged, first.size)
            args = tuple(args) + (start, step)
        ins, outs, declared = self._split(args, out, size)
        index = None
        if self._indexed or self._has_raw or size is not None or not self._ops_outs:
            index = self._loop(ins, outs, size)
        result = None if index is not None else _hoist.call(self, ins, outs, algorithm, handle, dry)
        if result is None:
            result = _ops._call(self, ins, outs, None, _hoist.strip(algorithm), dry=dry,
                                calls=self._calls, memo=self._memo, index=index, stream=handle)
        if dry:
            return result
        got = iter([result] if self.nout == 1 else result)
        results = [o if p.raw else next(got) for p, o in zip(self._outputs, declared)]
        if self.no_return:
            return None
        if self._pycuda is not None and not self.return_tuple:
            return results[0] if len(results) == 1 else tuple(results) if results else None
        return results[0] if len(results) == 1 and not self.return_tuple else tuple(results)

    def _range_kernel(self) -> "ElementwiseKernel":
        """This PyCUDA kernel with every array raw and i running over range= / slice=."""
        if self._pycuda is None:
            raise TypeError(f"{self.name}: range= and slice= belong to PyCUDA's form; a CuPy-form "
                            "kernel takes size= with raw arguments")
        if self._ranged is None:
            k = object.__new__(ElementwiseKernel)
            k.__dict__.update(self.__dict__)
            k._init_pycuda(self._fields["arguments"], self.operation, all_raw=True)
            k._layout()
            k._indexed, k._plain = True, False
            k._reads = ()
            k._calls, k._memo, k._ranged = {}, {}, None
            self._ranged = k
        return self._ranged

    def _explain(self, args, kw):
        return self._run(args, kw.get("out"), kw.get("algorithm"), kw.get("size"), None,
                         kw.get("block_size"), dry=True)

    def __repr__(self) -> str:
        def decl(p):
            return f"{'raw ' if p.raw else ''}{p.type_text} {p.name}"
        ins = ", ".join(decl(p) for p in self._inputs if not p.name.startswith("_"))
        outs = ", ".join(decl(p) for p in self._outputs)
        return f"ElementwiseKernel({ins!r}, {outs!r}, {self.operation!r}, name={self.name!r})"


def _with_block_size(algorithm, block_size):
    """CuPy's block_size= as the algorithm's block_size field (an explicit field wins over
    the tuning; a different explicit one is a conflict)."""
    if block_size is None:
        return algorithm
    if algorithm is None or isinstance(algorithm, Auto):
        return Auto(block_size=block_size, hoist=getattr(algorithm, "hoist", None))
    if isinstance(algorithm, Algorithm):
        if algorithm.block_size not in (None, block_size):
            raise ValueError(f"block_size={block_size} conflicts with {algorithm!r}; give the "
                             "block size once")
        return dataclasses.replace(algorithm, block_size=block_size)
    return algorithm
