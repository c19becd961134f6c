"""User kernels: ElementwiseKernel in CuPy's form and in PyCUDA's, on the ops' pipeline.

The user's operation becomes the body of a functor with named parameters, so it compiles as
written; every mode, pack, cache and backend then comes from the same pipeline as the
built-in ops. Parameters are elements, never pointers: the plan decides how each operand is
read, which is what makes broadcasting and vectorized access free.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from . import _codegen, _ops
from ._dtypes import ALL_DTYPES as DTYPES

__all__ = ["ElementwiseKernel", "C_NAMES"]

# C spellings a declaration may use, by dtype (PyCUDA declares `double *a`; CuPy accepts them too).
C_NAMES = {
    "double": "float64", "float": "float32", "half": "float16", "__half": "float16",
    "__nv_bfloat16": "bfloat16", "int": "int32", "int32_t": "int32", "long": "int64",
    "long long": "int64", "int64_t": "int64", "bool": "bool",
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
        if "raw" in words:
            raise ValueError(
                f"{decl!r}: raw parameters (indexed by hand with i) are not supported; stridewise "
                "hands the operation each parameter's element at its broadcast offset, so drop raw")
        words = [w for w in words if w not in _QUALIFIERS and w != "_non_const"]
        if len(words) < 2:
            raise ValueError(f"cannot parse parameter {decl!r}: write '<type> <name>', e.g. 'T x'")
        name, text = words[-1], " ".join(words[:-1])
        _check_name(name, decl)
        if len(text) == 1:
            _check_placeholder(text, decl)
            out.append(_Param(name, text, None, output))
        else:
            out.append(_Param(name, None, _dtype_name(text, name), output))
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


def _rewrite_pycuda(operation: str, arrays: set[str]) -> str:
    """`a[i]` becomes `a`, the element; any other use of an array or of i is an error."""
    toks = _tokens(operation)
    out, last, j = [], 0, 0
    while j < len(toks):
        t, pos = toks[j]
        if t in arrays and [x for x, _ in toks[j + 1:j + 4]] == ["[", "i", "]"]:
            end = toks[j + 3][1] + 1
            out.append(operation[last:pos] + t)
            last, j = end, j + 4
            continue
        if t in arrays or t == "i":
            snippet = operation[pos:pos + 24].split("\n")[0]
            what = (f"{t} is used as {snippet!r}" if t != "i"
                    else f"the index i is used outside x[i] ({snippet!r})")
            raise ValueError(
                f"operation line {_line(operation, pos)}: {what}. In the PyCUDA form an array may "
                "appear only as name[i], meaning its element (stridewise computes each operand's "
                "broadcast offset itself, so there is no flat index to do arithmetic with). "
                "Write name[i], or use the CuPy form ElementwiseKernel(in_params, out_params, "
                "operation), where each parameter names its element")
        j += 1
    out.append(operation[last:])
    return "".join(out)


@dataclass(frozen=True)
class _Source:
    """A user kernel's own text, to show compile errors in its own terms."""

    title: str
    operation: str
    preamble: str

    _DIAG = re.compile(r"^(operation|preamble)(?::(\d+)(?::\d+)?|\((\d+)\)):\s*(.*)$")

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
        if re.search(r"""[‘'"]i[’'"] was not declared|identifier "i" is undefined""", log):
            lines.append("  hint: there is no flat index i; each parameter already is its element")
        for label, text in (("operation", self.operation), ("preamble", self.preamble)):
            if label == "preamble" and not any(f == label for f, _, _ in diags):
                continue
            bad = {n for f, n, _ in diags if f == label}
            lines.append(f"{label}:")
            lines += [f"  {'>' if n in bad else ' '}{n:4d} | {x}"
                      for n, x in enumerate(text.split("\n"), 1)]
        return "\n".join(lines)


_COUNTER = itertools.count()


class ElementwiseKernel:
    """A user elementwise kernel over broadcast, strided arrays, in CuPy's or PyCUDA's form.

    CuPy's form::

        k = ElementwiseKernel("T x, float32 alpha", "T z", "z = alpha * x + 1", name="axpy1")
        z = k(x, 2.0)                 # out allocated; or k(x, 2.0, z) / k(x, 2.0, out=z)

    PyCUDA's form (all arguments passed in declaration order; arrays assigned as name[i] are
    the outputs, and name[i] means the element)::

        k = ElementwiseKernel("double *out, double *a", "out[i] = sin(a[i])", broadcasting=True)
        k(out, a)

    Parameters
    ----------
    in_params, out_params : comma-separated "<type> <name>". A one-letter type is a
        placeholder bound by the arguments' dtypes (the same letter means the same dtype);
        longer types are dtype names (float16, bfloat16, float32, float64, int32, int64, bool)
        or C names (half, float, double, int, long long, bool). An array whose dtype differs
        from a fixed type is converted in registers. Python scalars become kernel parameters
        of the parameter's type (an unbound placeholder takes int64 or float64).
    operation : C++ statements over the parameter names; each output is a local the kernel
        stores. Write each output once with a top-level `z = ...;` to keep it write-only;
        otherwise (a compound assignment, a read, an assignment under a condition) the output
        is loaded first, as CuPy's references would read it.
    name : kernel name (entry points, error messages).
    preamble : C++ before the functor (helper functions; `__device__` is accepted on the CPU).
    broadcasting : arguments broadcast, NumPy style (default). False requires equal shapes.
    **options : CuPy's and PyCUDA's tuning keywords (reduce_dims, options, keep, ...) are
        accepted and ignored; loop_prep and after_loop are refused (there is no per-thread loop).

    Inputs and outputs broadcast together; the output shape is the broadcast of every
    argument, and an out of another shape is an error. 16-bit floats compute in float32
    (the placeholder's C type is float) and round once on store.
    """

    broadcast_outputs = True

    def __init__(self, in_params, out_params, operation=None, name="kernel", preamble="", *,
                 broadcasting=True, **options):
        refused = [k for k in ("loop_prep", "after_loop") if options.get(k)]
        if refused:
            raise ValueError(f"{', '.join(refused)} is not supported: stridewise kernels have no "
                             "per-thread loop; put per-element code in the operation")
        if "*" in in_params or "[" in in_params:   # PyCUDA: (arguments, operation, name, ...)
            if operation is not None and name == "kernel":
                name = operation
            arguments, operation = in_params, out_params
            self._init_pycuda(arguments, operation)
        else:
            if operation is None:
                raise TypeError("ElementwiseKernel(in_params, out_params, operation): operation is "
                                "missing (the PyCUDA form declares arrays as pointers, 'double *a')")
            self._pycuda = None
            self._inputs = _parse_cupy(in_params, False)
            self._outputs = _parse_cupy(out_params, True)
            self._order = tuple(("in", i) for i in range(len(self._inputs))) + tuple(
                ("out", k) for k in range(len(self._outputs)))
            self._body = operation
        if not self._outputs:
            raise ValueError("an elementwise kernel needs at least one output")
        names = [p.name for p in self._inputs + self._outputs]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"parameter names repeat: {', '.join(sorted(dup))}")
        self.name = re.sub(r"\W", "_", str(name)) or "kernel"
        self.operation, self.preamble, self.broadcasting = operation, preamble, broadcasting
        self.nin, self.nout = len(self._inputs), len(self._outputs)
        self._reads = []
        toks = _tokens(self._body)
        for p in self._outputs:
            assigned, read = _top_level_writes(toks, p.name)
            self._reads.append(read)
        self._reads = tuple(self._reads)
        self._source = _Source(f"ElementwiseKernel {self.name!r}", operation, preamble)
        self._calls, self._memo = {}, {}
        self._id = next(_COUNTER)

    def _init_pycuda(self, arguments: str, operation: str) -> None:
        decls = _parse_pycuda(arguments)
        arrays = {n for n, _, is_array in decls if is_array}
        body = _rewrite_pycuda(operation, arrays)
        toks = _tokens(body)
        written = {t for j, (t, _) in enumerate(toks) if t in arrays and j + 1 < len(toks)
                   and (toks[j + 1][0] in _COMPOUND or toks[j + 1][0] == "=")
                   or t in arrays and j and toks[j - 1][0] in ("++", "--")}
        if not written:
            raise ValueError("the operation assigns no array: write, e.g., out[i] = ...; arrays "
                             "assigned as name[i] are the kernel's outputs")
        self._inputs, self._outputs, self._order, self._pycuda = [], [], [], []
        for name, text, _ in decls:
            letter = text if len(text) == 1 else None
            p = _Param(name, letter, None if letter else text, name in written)
            group = self._outputs if p.output else self._inputs
            self._order.append(("out" if p.output else "in", len(group)))
            self._pycuda.append(p.output)
            group.append(p)
        self._order = tuple(self._order)
        self._body = body

    # -- the op protocol _ops._call drives --------------------------------------------
    @property
    def names(self):
        return [p.name for p in self._inputs], [p.name for p in self._outputs]

    def typing(self, lib, key, out_key, convention) -> _ops.Typing:
        """Bind placeholders (outputs first, then input arrays, then scalars) and type the call."""
        bound = {}

        def bind(p, dt, what):
            have = bound.setdefault(p.letter, dt)
            if have is not dt:
                raise TypeError(f"{self.name}: {p.name} is {what} {dt.name} but {p.letter} is "
                                f"already {have.name}; the same placeholder means the same dtype")

        for p, k in zip(self._outputs, out_key):
            if k is not None and p.letter:
                bind(p, DTYPES[k], "an out of dtype")
        for p, k in zip(self._inputs, key):
            if not isinstance(k, type) and p.letter:
                bind(p, DTYPES[k], "an array of dtype")
        for p, k in zip(self._inputs, key):
            if isinstance(k, type) and p.letter and p.letter not in bound:
                bound[p.letter] = DTYPES["float64" if k is float else "int64"]
        for p in self._outputs:
            if p.letter and p.letter not in bound:
                raise TypeError(f"{self.name}: output {p.name} has type {p.letter}, which no input "
                                "determines; pass the outputs (out=...) to fix it")
        ins = [bound[p.letter] if p.letter else DTYPES[p.dtype] for p in self._inputs]
        outs = tuple(bound[p.letter] if p.letter else DTYPES[p.dtype] for p in self._outputs)
        math = {name: _ops._opmath(dt) for name, dt in DTYPES.items()}
        params = [(p.letter or math[dt.name], p.name, p.output)
                  for p, dt in zip(self._inputs + self._outputs, ins + list(outs))]
        fparams = [params[i] if src == "in" else params[len(ins) + i] for src, i in self._order]
        typedefs = sorted((letter, math[dt.name]) for letter, dt in bound.items())
        preamble = "#include <stridewise/user.h>\n"
        if self.preamble:
            preamble += _codegen.user_block("preamble", self.preamble) + "\n"
        preamble += _codegen.user_functor(fparams, self._body, typedefs)
        return _ops.Typing(
            compute=outs[0], outs=outs,
            params=tuple(dt for dt, k in zip(ins, key) if isinstance(k, type)),
            functor="UserOp", arg_types=tuple((dt.ctype, math[dt.name]) for dt in ins),
            out_types=tuple(math[dt.name] for dt in outs), reads=self._reads,
            order=self._order, preamble=preamble, label=self._source)

    # -- calls -------------------------------------------------------------------------
    def _split(self, args, out):
        if self._pycuda is not None:
            if len(args) != len(self._pycuda) or out is not None:
                raise TypeError(f"{self.name} takes its {len(self._pycuda)} arguments in "
                                "declaration order, outputs included (PyCUDA form)")
            ins = [a for a, o in zip(args, self._pycuda) if not o]
            outs = [a for a, o in zip(args, self._pycuda) if o]
            return ins, outs
        if len(args) == self.nin + self.nout and out is None:
            return args[: self.nin], list(args[self.nin:])
        if len(args) != self.nin:
            raise TypeError(f"{self.name} takes {self.nin} inputs (and optionally its "
                            f"{self.nout} outputs), got {len(args)} arguments")
        if out is not None and self.nout == 1 and not isinstance(out, (tuple, list)):
            out = [out]
        return args, out

    def __call__(self, *args, out=None, algorithm=None):
        """Run the kernel; returns the output, or a tuple of outputs when there are several."""
        ins, outs = self._split(args, out)
        return _ops._call(self, ins, outs, None, algorithm, calls=self._calls, memo=self._memo)

    def _explain(self, args, kw):
        ins, outs = self._split(args, kw.get("out"))
        return _ops._call(self, ins, outs, None, kw.get("algorithm"), dry=True,
                          calls=self._calls, memo=self._memo)

    def __repr__(self) -> str:
        ins = ", ".join(f"{p.type_text} {p.name}" for p in self._inputs)
        outs = ", ".join(f"{p.type_text} {p.name}" for p in self._outputs)
        return f"ElementwiseKernel({ins!r}, {outs!r}, {self.operation!r}, name={self.name!r})"
