"""Broadcast-invariant hoisting: what a fused kernel computes from small operands, computed once.

A user kernel's operation is parsed for the elementwise subset (arithmetic, comparisons,
ternaries, casts, calls of math and preamble functions, temporaries, assignments). On a call,
each maximal subexpression that reads only input operands whose joint broadcast shape S is at
most 1/8 of the output's is computed once per element of S by a pre-pass kernel (itself a
user kernel over S, so every backend and mode serves it), and the main kernel reads the result
as one more broadcast operand. Whatever does not parse runs unhoisted, as before.

Why results stay bit-identical: the pre-pass evaluates the same expression text on the same
operand types, and stores it in a dtype whose C type is exactly the expression's; the
inferred type is checked by a static_assert on decltype of the original expression, so a
wrong inference fails the compile and the call runs unhoisted. Every element of S is used by
the output, so the pre-pass evaluates nothing the unhoisted kernel does not.

Never hoisted: anything reading an output, a local variable, a raw array or the flat index
`i` (such kernels are not hoisted at all, nor those with loop_prep / after_loop); calls of
functions that are neither math functions nor preamble functions taking their arguments by
value (preamble functions are taken to be pure, as elementwise code is); function-like
macros; the branches of a ternary and the right side of && and || (evaluated only
sometimes); on the GPU, where NVRTC contracts a*b + c into one fma, a product whose result
feeds an addition or a statement (the unhoisted kernel may have fused it). Bare operands and
constants are never hoisted: the compiler already keeps them in registers.
"""
from __future__ import annotations

import dataclasses
import re
import sys
from dataclasses import dataclass, field

import numpy as _np

from stridewise.operands import arrays as _arrays
from stridewise.launch import pipeline as _ops
from stridewise import plan as _plan
from stridewise.integrations import torch_ops as _torch_ops
from stridewise.kernels import usercall as _usercall
from stridewise.operands.arrays import Scalar, View
from stridewise.operands.dtypes import ALL_DTYPES as DTYPES

__all__ = ["call", "strip", "parse"]

# A subexpression is hoistable where the pre-pass removes at least this factor of its
# evaluations. Whether Auto hoists is the backend's tuning (hoist_work_per_byte,
# hoist_min_output: tuning.py).
RATIO = 8

_STORE = {"bool": "bool", "int": "int32", "long long": "int64", "float": "float32",
          "double": "float64"}
_CTYPE = {"bool": "bool", "sw::i32": "int", "sw::i64": "long long", "float": "float",
          "double": "double"}
_RANK = ["int", "long long", "float", "double"]
_TYPE_WORDS = {"float": "float", "double": "double", "int": "int", "bool": "bool",
               "long long": "long long", "int32_t": "int", "int64_t": "long long",
               "sw::i32": "int", "sw::i64": "long long"}
# math functions: unary ones keep float and double (integers go to double, but abs); binary
# ones take the usual arithmetic conversions, with integers as double
_MATH1 = set("""sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh exp exp2 expm1 log
    log2 log10 log1p sqrt cbrt rsqrt erf erfc tgamma lgamma floor ceil trunc round rint nearbyint
    fabs abs""".split())
_MATH2 = set("pow atan2 fmod fmin fmax hypot copysign remainder fdim min max".split())
_MATH3 = {"fma"}
_CONSTANTS = {"true": "bool", "false": "bool", "M_PI": "double", "M_E": "double",
              "M_SQRT2": "double", "M_LN2": "double", "M_PI_2": "double", "M_1_PI": "double",
              "M_2_PI": "double", "M_SQRT1_2": "double", "M_LN10": "double"}
_BIN_LEVELS = [("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", ">", "<=", ">="),
               ("<<", ">>"), ("+", "-"), ("*", "/", "%")]


class _NoParse(Exception):
    pass


@dataclass(eq=False)
class Node:
    """One expression: kind is num, name, call, bin, un, cast, tern or paren; start/end are
    offsets in the operation's text."""

    kind: str
    op: str
    kids: list
    start: int
    end: int
    names: frozenset = frozenset()    # parameter names read
    pure: bool = True                 # hoistable by construction (no output, local, unknown)
    ctx: str = ""                     # how the parent uses it (for contraction)


@dataclass
class Template:
    """A parsed operation: its statements' expressions, and per-signature plans."""

    roots: list
    text: str
    pre: dict                 # preamble functions: name -> declared return type
    plans: dict = field(default_factory=dict)
    kernels: dict = field(default_factory=dict)
    quick: dict = field(default_factory=dict)   # _quick_key -> a plan that ran
    costs: dict = field(default_factory=dict)   # preamble function -> _cost of its body


class _Parser:
    def __init__(self, text, params, outputs, letters, preamble):
        from stridewise.kernels.elementwise import _tokens
        self.text = text
        self.toks = _tokens(text) + [("", len(text))]
        self.j = 0
        self.params, self.outputs, self.letters = params, outputs, letters
        self.locals: set = set()
        self.pre_funcs, self.macros = _preamble_functions(preamble)

    # tokens
    def peek(self, k=0):
        return self.toks[min(self.j + k, len(self.toks) - 1)][0]

    def take(self, want=None):
        t, pos = self.toks[self.j]
        if want is not None and t != want or t == "":
            raise _NoParse
        self.j += 1
        return t, pos

    def end_of_prev(self):
        t, pos = self.toks[self.j - 1]
        return pos + len(t)

    # statements
    def statements(self):
        roots = []
        while self.peek() != "":
            if self.peek() == ";":
                self.take()
                continue
            decl = self.type_words(0)
            if decl and _ident(self.peek(decl)) and self.peek(decl + 1) == "=":
                self.j += decl
                name, _ = self.take()
                if name in self.params or name in self.outputs:
                    raise _NoParse
                self.take("=")
                roots.append(self.expr("stmt"))
                self.locals.add(name)
            elif _ident(self.peek()) and self.peek(1) in ("=", "+=", "-=", "*=", "/=", "%="):
                name, _ = self.take()
                if name not in self.outputs and name not in self.locals:
                    raise _NoParse
                self.take()
                roots.append(self.expr("stmt"))
            else:
                raise _NoParse
            if self.peek() != "":   # the last statement's ';' is optional, as in CuPy
                self.take(";")
        return roots

    def type_words(self, k):
        """How many tokens from k spell a type (0: none)."""
        n = 1 if self.peek(k) == "const" else 0
        t = self.peek(k + n)
        if t == "long" and self.peek(k + n + 1) == "long":
            return n + 2
        if t == "sw" and self.peek(k + n + 1) == "::" and _ident(self.peek(k + n + 2)):
            return n + 3
        if t in _TYPE_WORDS or t in self.letters or t in ("auto", "half", "unsigned", "char",
                                                          "short", "long", "size_t", "ptrdiff_t"):
            return n + 1
        return 0

    def type_text(self, n):
        words = [self.take()[0] for _ in range(n)]
        return " ".join(w for w in words if w != "const").replace("sw :: ", "sw::")

    # expressions
    def expr(self, ctx):
        start = self.toks[self.j][1]
        cond = self.binary(0)
        if self.peek() != "?":
            cond.ctx = cond.ctx or ctx
            return cond
        self.take()
        a = self.expr("branch")
        self.take(":")
        b = self.expr("branch")
        cond.ctx = "cond"
        return self.node("tern", "?", [cond, a, b], start, ctx)

    def node(self, kind, op, kids, start, ctx="", names=None, pure=True):
        n = Node(kind, op, kids, start, self.end_of_prev(),
                 frozenset().union(*(k.names for k in kids)) if names is None else names,
                 pure and all(k.pure for k in kids), ctx)
        return n

    def binary(self, level):
        if level == len(_BIN_LEVELS):
            return self.unary()
        start = self.toks[self.j][1]
        left = self.binary(level + 1)
        while self.peek() in _BIN_LEVELS[level]:
            op, _ = self.take()
            right = self.binary(level + 1)
            left.ctx = left.ctx or op
            right.ctx = right.ctx or ("branch" if op in ("&&", "||") else op)
            left = self.node("bin", op, [left, right], start)
        return left

    def unary(self):
        start = self.toks[self.j][1]
        t = self.peek()
        if t in ("-", "+", "!", "~"):
            self.take()
            x = self.unary()
            x.ctx = "wrap" if t in "-+" else t
            return self.node("un", t, [x], start)
        if t in ("++", "--", "*", "&"):
            raise _NoParse
        if t == "(":
            n = self.type_words(1)
            if n and self.peek(1 + n) == ")" and self.peek(1) not in self.params:
                self.take()
                ty = self.type_text(n)
                self.take(")")
                x = self.unary()
                x.ctx = "wrap"
                return self.node("cast", ty, [x], start)
        if t == "static_cast":
            self.take()
            self.take("<")
            n = self.type_words(0)
            if not n:
                raise _NoParse
            ty = self.type_text(n)
            self.take(">")
            self.take("(")
            x = self.expr("wrap")
            self.take(")")
            return self.node("cast", ty, [x], start)
        return self.postfix()

    def postfix(self):
        start = self.toks[self.j][1]
        t = self.peek()
        if t == "(":
            self.take()
            x = self.expr("wrap")
            self.take(")")
            return self.node("paren", "()", [x], start)
        if t == "std" and self.peek(1) == "::":
            self.j += 2
            t = self.peek()
        if t == "::":
            self.take()
            t = self.peek()
        if _number(t):
            self.take()
            return self.node("num", t, [], start)
        if not _ident(t):
            raise _NoParse
        self.take()
        if self.peek() == "(":
            self.take()
            args = []
            while self.peek() != ")":
                args.append(self.expr("arg"))
                if self.peek() != ")":
                    self.take(",")
            self.take(")")
            known = t in _MATH1 or t in _MATH2 or t in _MATH3 or t in self.pre_funcs
            if t in self.macros or not known:   # opaque: arguments maybe evaluated lazily
                for a in args:
                    a.ctx = "branch"
            return self.node("call", t, args, start, pure=known and t not in self.macros)
        if self.peek() in ("[", ".", "->", "++", "--"):
            raise _NoParse
        if t in self.params:
            return self.node("name", t, [], start, names=frozenset([t]))
        return self.node("name", t, [], start, pure=t in _CONSTANTS)


def _ident(t: str) -> bool:
    return bool(t) and (t[0].isalpha() or t[0] == "_")


def _number(t: str) -> bool:
    return bool(t) and (t[0].isdigit() or t[0] == "." and len(t) > 1)


def _preamble_functions(preamble: str):
    """(functions taking every argument by value whose bodies have no effect outside them, with
    their declared return type or None), and function-like macros."""
    macros = set(re.findall(r"#\s*define\s+(\w+)\(", preamble))
    funcs: dict = {}
    bodies: dict = {}
    for m in re.finditer(r"([\w:]+(?:\s+long)?)\s+(\w+)\s*\(([^()]*)\)\s*(?:const\s*)?\{", preamble):
        ret, name, params = m.groups()
        if name in funcs and funcs[name] is False:
            continue
        funcs[name] = False if ("&" in params or "*" in params or name in funcs) else ret
        bodies[name] = (_body(preamble, m.end() - 1), [w for w in re.findall(r"\w+", params)])
    pure = {n for n, r in funcs.items() if r is not False}
    while True:   # a function is pure when its body is and every function it calls is
        keep = {n for n in pure if _pure_body(*bodies[n], pure)}
        if keep == pure:
            break
        pure = keep
    return {n: funcs[n] for n in pure}, macros


def _body(text: str, brace: int) -> str:
    depth = 0
    for j in range(brace, len(text)):
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        if depth == 0:
            return text[brace + 1:j]
    return ""


# what makes a body's effect reach outside it, or its result depend on more than its arguments
_IMPURE = {"static", "volatile", "asm", "__asm__", "extern", "new", "delete", "throw", "goto",
           "this", "__shared__", "__syncthreads", "printf", "clock", "clock64", "rand"}
_KEYWORDS = {"if", "else", "for", "while", "do", "return", "sizeof", "switch", "case", "break",
             "continue", "static_cast", "const", "auto", "unsigned", "signed", "long", "int",
             "float", "double", "bool", "char", "short", "true", "false", "std", "sw", "default"}
_PURE_CALLS = {"isnan", "isinf", "isfinite", "signbit", "fpclassify", "ldexp", "frexp_", "modf_",
               "fminf", "fmaxf", "sqrtf", "expf", "logf", "sinf", "cosf", "tanhf", "powf",
               "fabsf", "floorf", "ceilf"}


def _pure_body(body: str, params: list, pure: set) -> bool:
    """Whether a preamble function's body assigns only its own locals and arguments and calls
    only math functions and pure preamble functions (by tokens: conservative)."""
    from stridewise.kernels.elementwise import _tokens
    toks = [t for t, _ in _tokens(body)]
    local = set(params)
    for j, t in enumerate(toks):
        if t in _IMPURE or t.startswith("atomic") or t.startswith("__"):
            return False
        nxt = toks[j + 1] if j + 1 < len(toks) else ""
        prev = toks[j - 1] if j else ""
        if _ident(t) and prev and (_ident(prev) or prev in ("*", "&")) and prev not in \
                ("return", "else", "case") and nxt in ("=", ";", ",", "[", ")", ":"):
            local.add(t)     # a declaration (a type word before the name)
        if t in ("=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="):
            target = prev
            if not (_ident(target) and target in local):
                return False
        if t in ("++", "--"):
            target = nxt if _ident(nxt) else prev
            if target not in local:
                return False
        if t in ("->", "[") and prev not in local:
            return False
        if _ident(t) and nxt == "(" and t not in _KEYWORDS and t not in local:
            if not (t in _MATH1 or t in _MATH2 or t in _MATH3 or t in pure or t in _PURE_CALLS):
                return False
    return True


def parse(operation: str, params, outputs, letters, preamble: str):
    """The operation's statement expressions, or None where it is not in the subset."""
    try:
        p = _Parser(operation, set(params), set(outputs), set(letters), preamble)
        roots = p.statements()
    except (_NoParse, RecursionError):
        return None
    return Template(roots, operation, p.pre_funcs, costs=_function_costs(preamble))


# -- typing ---------------------------------------------------------------------------------
def _arith(*types):
    if any(t is None for t in types):
        return None
    ranks = [_RANK.index("int" if t == "bool" else t) for t in types]
    return _RANK[max(ranks)]


def _literal(t: str):
    low = t.lower()
    if low.startswith("0x"):
        return None
    if any(c in low for c in ".e") and not low.startswith("0x"):
        return "float" if low.endswith("f") else None if low.endswith("l") else "double"
    digits = low.rstrip("u l")
    if low != digits or not digits.isdigit():
        return "long long" if low.endswith("ll") and not "u" in low else None
    return "int" if int(digits) < 2**31 else "long long"


def infer(n: Node, env: dict, letters: dict, pre: dict):
    """The C type of n ('bool', 'int', 'long long', 'float', 'double'), or None if unsure."""
    k = n.kind
    if k == "num":
        return _literal(n.op)
    if k == "name":
        return env.get(n.op) or _CONSTANTS.get(n.op)
    kids = [infer(c, env, letters, pre) for c in n.kids]
    if k == "paren":
        return kids[0]
    if k == "cast":
        ty = letters.get(n.op, n.op)
        return _TYPE_WORDS.get(ty) if kids[0] is not None else None
    if k == "un":
        if kids[0] is None:
            return None
        return "bool" if n.op == "!" else _arith(kids[0])
    if k == "tern":
        return kids[1] if kids[1] == kids[2] else _arith(kids[1], kids[2])
    if k == "bin":
        if n.op in ("==", "!=", "<", ">", "<=", ">=", "&&", "||"):
            return "bool" if None not in kids else None
        t = _arith(*kids)
        if n.op in ("%", "&", "|", "^", "<<", ">>") and t in ("float", "double"):
            return None
        return _arith(kids[0]) if n.op in ("<<", ">>") else t
    if k == "call":
        if n.op in pre:
            ret = pre[n.op]
            return _TYPE_WORDS.get(letters.get(ret, ret)) if ret else None
        if None in kids:
            return None
        if n.op in ("min", "max"):
            return _arith(*kids)
        if n.op == "abs" and kids[0] in ("int", "long long"):
            return kids[0]
        if all(t == "float" for t in kids):
            return "float"
        return "double" if all(t in _RANK + ["bool"] for t in kids) else None
    return None


# -- per call -------------------------------------------------------------------------------
def strip(algorithm):
    """The algorithm without its hoist field (the pipeline below never reads it)."""
    if getattr(algorithm, "hoist", None) is None:
        return algorithm
    return dataclasses.replace(algorithm, hoist=None)


def _wrapped_root(n: Node) -> Node:
    while n.kind in ("paren", "cast") or n.kind == "un" and n.op in "-+":
        n = n.kids[0]
    return n


# math functions that end in no multiply the compiler could fuse with what consumes them
_NO_PRODUCT = {"sqrt", "fabs", "abs", "floor", "ceil", "trunc", "rint", "round", "nearbyint",
               "fmin", "fmax", "min", "max", "copysign"}


def _exposed_product(n: Node) -> bool:
    """Whether n's value may come from a multiply that the unhoisted kernel could contract
    with an addition around it (a product, or a call whose inlined body may end in one)."""
    n = _wrapped_root(n)
    if n.kind == "tern":
        return _exposed_product(n.kids[1]) or _exposed_product(n.kids[2])
    return n.kind == "bin" and n.op == "*" or n.kind == "call" and n.op not in _NO_PRODUCT


def _ops_in(n: Node) -> int:
    return (n.kind in ("bin", "un", "tern")) + sum(map(_ops_in, n.kids))


# What one evaluation costs, in additions: the rule's model of work, not a measurement of
# any one device (the thresholds it is compared with are: tuning.py).
_ROOTS = {"sqrt", "rsqrt"}
_CHEAP_CALLS = _NO_PRODUCT - _ROOTS


# the built-in ops' functors (sw.fuse's preamble functions call them), by what they cost
_CHEAP_FUNCTOR = re.compile(r"(Abs|Add|Bitwise\w*|Cast|Clip|Copysign|Invert|Is\w+|\w*Shift|"
                            r"Logical\w*|Maximum|Minimum|Multiply|Negative|Positive|Relu|Sign|"
                            r"Square|Subtract|Where|Fma|\w*Equal|Less\w*|Greater\w*)Functor$")
_ROOT_FUNCTOR = re.compile(r"(Divide|FloorDivide|Reciprocal|Sqrt|Rsqrt)Functor$")


def _call_cost(name: str, costs: dict) -> int:
    if name in costs:
        return costs[name]
    return 1 if name in _CHEAP_CALLS else 4 if name in _ROOTS else 40


def _cost(n: Node, costs: dict) -> int:
    """Operations one evaluation of n does, in additions: a division or a square root counts
    4, a transcendental function 40 (a libm call's tens of cycles on the host; a range
    reduction and a polynomial on the GPU), a preamble function what its body does, anything
    else 1."""
    if n.kind == "call":
        own = _call_cost(n.op, costs)
    elif n.kind == "bin":
        own = 4 if n.op in ("/", "%") else 1
    else:
        own = 1 if n.kind in ("un", "tern", "cast") else 0
    return own + sum(_cost(k, costs) for k in n.kids)


def _function_costs(preamble: str) -> dict:
    """Each preamble function's cost in _cost's units, from its body's operators and calls
    (functions called before their definition count as a transcendental)."""
    from stridewise.kernels.elementwise import _tokens
    costs: dict = {}
    for m in re.finditer(r"([\w:]+(?:\s+long)?)\s+(\w+)\s*\(([^()]*)\)\s*(?:const\s*)?\{", preamble):
        toks = [t for t, _ in _tokens(_body(preamble, m.end() - 1))] + [""]
        total = 0
        for t, nxt in zip(toks, toks[1:]):
            if t in ("+", "-", "*", "?", "==", "!=", "<=", ">=", "&&", "||"):
                total += 1
            elif t in ("/", "%"):
                total += 4
            elif t.endswith("Functor"):
                total += 1 if _CHEAP_FUNCTOR.match(t) else 4 if _ROOT_FUNCTOR.match(t) else 40
            elif _ident(t) and nxt == "(" and (t in _MATH1 or t in _MATH2 or t in _MATH3
                                               or t in costs):
                total += _call_cost(t, costs)
        costs[m.group(2)] = max(1, total)
    return costs


def rule_inputs(hoisted, operands, out_itemsizes, size: int, costs: dict) -> tuple:
    """(operations the hoisted subexpressions save per output element, bytes the unhoisted
    kernel moves per output element: every array operand's own elements and the outputs)."""
    saved = sum(_cost(n, costs) * (1 - _arrays._prod(h.shape) / size)
                for h in hoisted for n in h.nodes)
    moved = sum(o.dtype.itemsize * _arrays._prod(o.shape) for o in operands if isinstance(o, View))
    moved = moved / size + sum(out_itemsizes)
    return saved, moved


def _worth(n: Node) -> bool:
    """Whether Auto hoists n: a call, a division, or two operations at least (one add or
    multiply costs about what reading the temporary does)."""
    def costly(m):
        return m.kind == "call" or m.kind == "bin" and m.op in ("/", "%") or any(map(costly, m.kids))
    return costly(n) or _ops_in(n) >= 2


@dataclass
class Hoisted:
    """One hoisted subexpression: its text, the temporary's name, dtype and shape."""

    text: str
    name: str
    dtype: str
    shape: tuple
    nodes: list = field(repr=False, default_factory=list)

    def __str__(self) -> str:
        n = _arrays._prod(self.shape)
        return f"{self.name} = {self.text}  [{self.dtype} {self.shape}, {n:,} elements]"


@dataclass
class Declined:
    """Why a call that parsed runs unhoisted (explain shows it)."""

    reason: str


@dataclass
class _Plan:
    hoisted: list
    pre: list            # (kernel, input names, temps' Hoisted) per distinct small shape
    main: object
    main_ins: list       # names of the main kernel's inputs (original inputs, then temps)
    checked: bool = False
    key: tuple = ()      # its key in Template.plans
    place: tuple = ()    # (library, device) the temporaries are allocated on
    note: str = ""       # why (the caller, or Auto's rule with its figures)


def _template(k):
    t = k.__dict__.get("_hoist_template", False)
    if t is False:
        t = None
        if not (k._indexed or k._has_raw or k._loop_prep or k._after_loop or not k._ops_outs):
            letters = {p.letter for p in k._inputs + k._outputs if p.letter}
            t = parse(k._body, [p.name for p in k._ops_ins], [p.name for p in k._ops_outs],
                      letters, k.preamble)
        k._hoist_template = t
    return t


def call(k, ins, outs, algorithm, stream, dry):
    """Run kernel k hoisted, or return None where it does not hoist (the caller runs it as
    before). ins, outs: the pipeline's inputs and outputs (None: allocate)."""
    want = getattr(algorithm, "hoist", None)
    if want is False or _torch_ops.routed(ins, outs):   # autograd, fake tensors: the custom op
        if want is False and dry:
            result = _ops._call(k, ins, outs, None, strip(algorithm), dry=True,
                                calls=k._calls, memo=k._memo, stream=stream)
            result.hoist_note = "hoist=False (caller)"
            return result
        return None
    t = _template(k)
    if t is None:
        return None
    quick = _quick_key(want, ins, outs)
    plan = t.quick.get(quick)
    if plan is None or dry:
        plan = _full_plan(k, t, ins, outs, want)
        if isinstance(plan, Declined):
            if quick is not None and not dry:
                t.quick[quick] = plan
            elif dry:   # explain says why: the unhoisted call, as the caller would run it
                result = _ops._call(k, ins, outs, None, strip(algorithm), dry=True,
                                    calls=k._calls, memo=k._memo, stream=stream)
                result.hoist_note = plan.reason
                return result
            return None
        if plan is None:
            return None
    if isinstance(plan, Declined):
        return None
    alg = strip(algorithm)
    by_name = dict(zip((p.name for p in k._ops_ins), ins))
    lib, device = plan.place
    temps = {}
    for pre, names, hs in plan.pre:
        for h in hs:
            temps[h.name] = _arrays.allocator(lib, device, h.shape, DTYPES[h.dtype])()[0]
    if not plan.checked:   # compile the pre-passes first: a failed type guard runs unhoisted
        try:
            for pre, names, hs in plan.pre:
                p = _ops._call(pre, [by_name[n] for n in names], [temps[h.name] for h in hs],
                               None, alg, dry=True, calls=pre._calls, memo=pre._memo)
                p.kernel = p.kernel or _ops._kernel(p)
        except Exception:   # noqa: BLE001 - whatever the hoisted form cannot build runs unhoisted
            t.plans[plan.key] = None
            return None
    if not dry:
        for pre, names, hs in plan.pre:
            _ops._call(pre, [by_name[n] for n in names], [temps[h.name] for h in hs], None, alg,
                       calls=pre._calls, memo=pre._memo, stream=stream)
    main_args = [temps[n] if n in temps else by_name[n] for n in plan.main_ins]
    try:
        result = _ops._call(plan.main, main_args, outs, None, alg, dry=dry,
                            calls=plan.main._calls, memo=plan.main._memo, stream=stream)
    except Exception:   # noqa: BLE001 - a first call that fails (before any launch) runs unhoisted
        if plan.checked:
            raise
        t.plans[plan.key] = None
        return None
    if dry:
        result.hoisted = tuple(plan.hoisted)
        result.hoist_note = plan.note
    else:
        plan.checked = True
        if quick is not None:
            t.quick[quick] = plan
    return result


def _quick_key(want, ins, outs):
    """What the plan depends on (libraries, devices, dtypes, shapes, scalars' types), read
    straight off the common argument types: a warm call skips converting every argument to a
    View, which cost more than the hoisted launches (None: some other type, the full key)."""
    torch = sys.modules.get("torch")
    key = [want]
    for x in (*ins, *(outs or ())):
        tx = type(x)
        if tx is _np.ndarray:
            key.append((x.dtype, x.shape))
        elif tx is float or tx is int or tx is bool or x is None:
            key.append(tx)
        elif torch is not None and tx is torch.Tensor:
            key.append((x.dtype, x.shape, x.device, x.layout))
        else:
            return None
    return tuple(key)


def _full_plan(k, t, ins, outs, want):
    """The plan for this call from its operands' Views, or None (it runs unhoisted)."""
    try:
        operands = [_arrays.as_operand(x, p.name) for p, x in zip(k._ops_ins, ins)]
        out_views = [None if o is None else _arrays.as_operand(o, p.name)
                     for p, o in zip(k._ops_outs, outs or [None] * k.nout)]
    except TypeError:
        return None
    if any(isinstance(o, _usercall.RawArray) for o in operands) or \
            any(o is not None and not isinstance(o, View) for o in out_views):
        return None
    key = (want, tuple(o.pytype if isinstance(o, Scalar) else (o.lib, o.device, o.dtype.name, o.shape)
                       for o in operands),
           tuple(o and (o.dtype.name, o.shape) for o in out_views))
    plan = t.plans.get(key, False)
    if plan is False:
        try:
            plan = _plan_for(k, t, operands, out_views, want)
        except Exception:   # noqa: BLE001 - never rejected: the unhoisted call runs (and
            plan = None     # reports what is wrong with the arguments, if anything)
        t.plans[key] = plan
    if isinstance(plan, _Plan):
        plan.key = key
        plan.place = next((o.lib, o.device) for o in operands + out_views if isinstance(o, View))
    return plan


# Dynamo traces a call unhoisted: the compiled graph holds the kernel's custom op (_torch_ops)
call._torchdynamo_inline = lambda *args: None


def _plan_for(k, t: Template, operands, out_views, want):
    from stridewise.kernels.elementwise import ElementwiseKernel, _tokens

    key = [o.pytype if isinstance(o, Scalar) else o.dtype.name for o in operands]
    bound = k._bind(key, tuple(v and v.dtype.name for v in out_views))
    names = [p.name for p in k._ops_ins]
    shapes = {p.name: o.shape for p, o in zip(k._ops_ins, operands) if isinstance(o, View)}
    out_shape = _plan.broadcast_shapes(list(shapes.values()) + [v.shape for v in out_views if v],
                                       list(shapes) + ["out"] * sum(1 for v in out_views if v))
    size = _arrays._prod(out_shape)
    if size == 0:
        return None
    math = {n: _ops._opmath(dt) for n, dt in DTYPES.items()}
    if any(p.letter and p.letter not in bound for p in k._ops_ins + k._ops_outs):
        return None   # the unhoisted call says which type is missing
    dts = {p.name: bound[p.letter] if p.letter else DTYPES[p.dtype] for p in k._ops_ins + k._ops_outs}
    env = {n: _CTYPE.get(math[dts[n].name]) for n in names}
    letters = {L: _CTYPE.get(math[dt.name], math[dt.name]) for L, dt in bound.items()}
    device = next(o.device for o in operands + out_views if isinstance(o, View))
    contracts = device[0] != "cpu" and dict(k._nvrtc).get("fma", True)

    chosen: dict = {}   # text -> Hoisted

    def visit(n: Node):
        if n.kind in ("num", "name"):
            return
        arrays = [x for x in n.names if x in shapes]
        if n.pure and arrays and n.ctx != "branch":
            small = _plan.broadcast_shapes([shapes[x] for x in arrays], arrays)
            ctype = infer(n, env, letters, t.pre)
            ok = (ctype in _STORE and _arrays._prod(small) * RATIO <= size
                  and (want or _worth(n))
                  and not (contracts and ctype in ("float", "double")
                           and n.ctx in ("+", "-", "stmt", "wrap") and _exposed_product(n)))
            if ok:
                text = t.text[n.start:n.end]
                norm = " ".join(x for x, _ in _tokens(text))
                h = chosen.get(norm)
                if h is None:
                    h = chosen[norm] = Hoisted(text, "", _STORE[ctype], small)
                h.nodes.append(n)
                return
        for c in n.kids:
            if c.ctx != "branch":
                visit(c)

    for r in t.roots:
        visit(r)
    if not chosen:
        return Declined("nothing to hoist: no subexpression of operands at most "
                        f"1/{RATIO} of the output's size")
    note = "hoist=True (caller)"
    if want is None:
        from stridewise.backends import get_backend
        from stridewise.tuning import elementwise_tuning
        backend = device[0]
        tuning = elementwise_tuning(backend, get_backend(backend).device_key(device),
                                    dts[k._ops_outs[0].name].name)
        saved, moved = rule_inputs(chosen.values(), operands,
                                   [dts[p.name].itemsize for p in k._ops_outs], size, t.costs)
        texts = ", ".join(h.text for h in chosen.values())
        figure = (f"{saved:.1f} operations saved per output element against {moved:.1f} bytes "
                  f"moved; {backend} hoists from {tuning.hoist_work_per_byte} per byte "
                  f"and {tuning.hoist_min_output:,} outputs (tuning)")
        if size < tuning.hoist_min_output or saved < tuning.hoist_work_per_byte * moved:
            return Declined(f"Auto: not hoisted ({texts}): {size:,} outputs, {figure}")
        note = f"Auto: hoisted, {figure}"
    taken = {x for x, _ in _tokens(t.text + "\n" + k.preamble)} | set(names)
    hoisted = list(chosen.values())
    j = 0
    for h in hoisted:
        while f"hoist{j}" in taken:
            j += 1
        h.name = f"hoist{j}"
        j += 1
    # the main operation: each hoisted span replaced by its temporary's name
    spans = sorted((n.start, n.end, h.name) for h in hoisted for n in h.nodes)
    body, last = [], 0
    for s, e, nm in spans:
        body.append(t.text[last:s] + nm)
        last = e
    body.append(t.text[last:])
    body = "".join(body)
    used = {x for x, _ in _tokens(body)}
    # an operand the main operation no longer reads still fixes extents of the output
    # where nothing else does: keep those (their loads are dead code in the functor)
    have = [shapes[n] for n in shapes if n in used] + [h.shape for h in hoisted] + \
        [v.shape for v in out_views if v]
    for n in sorted((n for n in shapes if n not in used), key=lambda n: -_arrays._prod(shapes[n])):
        if _plan.broadcast_shapes(have, ["x"] * len(have)) == out_shape:
            break
        used.add(n)
        have.append(shapes[n])

    def decl(p, name=None):
        dt = dts[p.name]
        return f"{dt.name} {name or p.name}"

    typedefs = "".join(f"typedef {math[dt.name]} {L};\n" for L, dt in sorted(bound.items()))
    preamble = typedefs + k.preamble
    options = k._fields["options"]
    main_ins = [p.name for p in k._ops_ins if p.name in used] + [h.name for h in hoisted]
    groups: dict = {}
    for h in hoisted:
        groups.setdefault(h.shape, []).append(h)
    cache_key = (tuple(dts[n].name for n in dts), tuple((h.text, h.dtype) for h in hoisted),
                 tuple(main_ins),
                 tuple(tuple(h.name for h in hs) for hs in groups.values()))
    kernels = t.kernels.get(cache_key)
    if kernels is None:
        in_params = ", ".join([decl(p) for p in k._ops_ins if p.name in used]
                              + [f"{h.dtype} {h.name}" for h in hoisted])
        out_params = ", ".join(decl(p) for p in k._ops_outs)
        main = ElementwiseKernel(in_params, out_params, body, name=f"{k.name}_hoisted",
                                 preamble=preamble, options=options)
        pres = []
        for g, hs in enumerate(groups.values()):
            pnames = [n for n in names if any(n in h.nodes[0].names for h in hs)]
            by = {p.name: p for p in k._ops_ins}
            guard = "".join(
                f"static_assert(sw_hoist_same<decltype({h.text}), "
                f"{math[h.dtype]}>::value, \"hoisted type\");\n" for h in hs)
            op = guard + "".join(f"{h.name} = {h.text};\n" for h in hs)
            pre = ElementwiseKernel(", ".join(decl(by[n]) for n in pnames),
                                    ", ".join(f"{h.dtype} {h.name}" for h in hs), op,
                                    name=f"{k.name}_prepass{g}", preamble=_SAME + preamble,
                                    options=options)
            pres.append((pre, pnames))
        kernels = t.kernels[cache_key] = (main, pres)
    main, pres = kernels
    pre = [(kern, pnames, hs) for (kern, pnames), hs in zip(pres, groups.values())]
    return _Plan(hoisted, pre, main, main_ins, note=note)


# decltype of the original expression, less references and cv, must be the temporary's type
_SAME = """template <class A, class B> struct sw_hoist_same_ { static constexpr bool value = false; };
template <class A> struct sw_hoist_same_<A, A> { static constexpr bool value = true; };
template <class A> struct sw_hoist_bare { typedef A type; };
template <class A> struct sw_hoist_bare<A&> : sw_hoist_bare<A> {};
template <class A> struct sw_hoist_bare<A&&> : sw_hoist_bare<A> {};
template <class A> struct sw_hoist_bare<const A> : sw_hoist_bare<A> {};
template <class A, class B> struct sw_hoist_same : sw_hoist_same_<typename sw_hoist_bare<A>::type, B> {};
"""
