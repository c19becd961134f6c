"""Codegen: one small C++ translation unit per kernel variant.

The unit includes the header library, defines the element functor's call and an `Op`
that knows how each operand is read in this mode, and exposes one `extern "C"` entry point
from the backend. Grid and block size stay out of the source, so a new launch geometry
never recompiles.
"""
from __future__ import annotations

from dataclasses import dataclass

from ._dtypes import DType

__all__ = ["KernelSpec", "generate", "slot_format"]

_INDEX = {32: "sw::i32", 64: "sw::i64"}


@dataclass(frozen=True)
class KernelSpec:
    """Everything that selects one compiled kernel.

    Attributes
    ----------
    op : short op name, used in the entry point's name.
    functor : C++ type of the element functor; it maps OpMath values to one OpMath value.
    preamble : C++ code the functor needs (user kernels), placed before the Op.
    arrays : dtype of each array operand, outputs first.
    params : dtype of each host scalar parameter (already the compute dtype).
    args : functor argument order; ("array", k) or ("param", j) per argument.
    compute : the dtype inputs are converted to before the functor (then to OpMath).
    mode, kinds, pack, index_bits, ndim : from the plan and the resolved algorithm.
    """

    op: str
    functor: str
    arrays: tuple
    params: tuple
    args: tuple
    compute: DType
    mode: str
    kinds: tuple
    pack: int
    index_bits: int
    ndim: int
    nout: int = 1
    preamble: str = ""

    @property
    def entry(self) -> str:
        return f"stridewise_{self.op}_{self.mode}"

    @property
    def nslots(self) -> int:
        na, d = len(self.arrays), self.ndim
        return na + 2 + d + na * d + na + len(self.params)


def slot_format(spec: KernelSpec) -> str:
    """`struct` format of the slot record the entry point reads (see pack.h Layout)."""
    na, d = len(spec.arrays), spec.ndim
    return "<" + "Q" * na + "qq" + "q" * d + "q" * (na * d) + "q" * na + "".join(
        p.slot for p in spec.params)


def _describe(spec: KernelSpec) -> str:
    outs = ", ".join(a.name for a in spec.arrays[: spec.nout])
    ins = ", ".join(
        spec.arrays[i].name if src == "array" else f"scalar {spec.params[i].name}"
        for src, i in spec.args)
    return (f"// {spec.op}: {outs} = f({ins}), computed in {spec.compute.name}\n"
            f"// mode {spec.mode} | pack {spec.pack} | int{spec.index_bits} index | "
            f"{spec.ndim} merged dims | operands: {', '.join(spec.kinds)}\n")


def _uniform_fields(spec: KernelSpec) -> tuple[list[str], list[str]]:
    fields, init = [], []
    d = spec.ndim
    for k, (dt, kind) in enumerate(zip(spec.arrays, spec.kinds)):
        if kind == "uniform":
            fields.append(f"{dt.ctype} v{k};")
            init.append(f"u.v{k} = sw::load_one<{dt.ctype}>(s[L::kPtr + {k}].ptr, 0);")
        elif kind == "strided":
            fields.append(f"Index step{k};")
            init.append(f"u.step{k} = (Index)s[L::kStride + {k * d + d - 1}].i;")
        elif kind == "periodic":
            fields.append(f"Index period{k};")
            init.append(f"u.period{k} = (Index)s[L::kPeriod + {k}].i;")
    for j, dt in enumerate(spec.params):
        fields.append(f"{dt.ctype} p{j};")
        init.append(f"u.p{j} = sw::slot_get<{dt.ctype}>(s[L::kParam + {j}]);")
    return fields, init


def _load(k: int, dt: DType, kind: str) -> tuple[str, str]:
    """(statement loading operand k, expression of element e)."""
    c = dt.ctype
    if kind == "dense":
        return f"const sw::Pack<{c}, P> a{k} = sw::load_pack<{c}, P>(p[{k}], off[{k}]);", f"a{k}.elem[e]"
    if kind == "bcast":
        return f"const {c} a{k} = sw::load_one<{c}>(p[{k}], off[{k}]);", f"a{k}"
    if kind == "uniform":
        return "", f"u.v{k}"
    if kind == "strided":
        return (f"{c} a{k}[P];\n    SW_UNROLL for (int e = 0; e < P; ++e) "
                f"a{k}[e] = sw::load_one<{c}>(p[{k}], off[{k}] + e * u.step{k});", f"a{k}[e]")
    if kind == "periodic":  # one division per pack (done by the loop); stepped within it
        return (f"{c} a{k}[P];\n    {{\n      Index ph = off[{k}];\n"
                f"      SW_UNROLL for (int e = 0; e < P; ++e) {{\n"
                f"        a{k}[e] = sw::load_one<{c}>(p[{k}], ph);\n"
                f"        if (++ph == u.period{k}) ph = 0;\n      }}\n    }}", f"a{k}[e]")
    raise ValueError(kind)


def generate(spec: KernelSpec, entry_point) -> str:
    """C++ source of `spec`; `entry_point(spec)` is the backend's extern "C" wrapper."""
    t, m = spec.compute.ctype, f"typename sw::OpMath<{spec.compute.ctype}>::type"
    fields, init = _uniform_fields(spec)
    loads, exprs = [], {}
    for k in range(spec.nout, len(spec.arrays)):
        stmt, expr = _load(k, spec.arrays[k], spec.kinds[k])
        if stmt:
            loads.append(stmt)
        exprs[k] = expr
    call_args = []
    for src, i in spec.args:
        raw = exprs[i] if src == "array" else f"u.p{i}"
        call_args.append(f"sw::convert<M>(sw::convert<T>({raw}))")
    out = spec.arrays[0].ctype
    if spec.kinds[0] == "dense":
        store = f"sw::store_pack<{out}, P>(p[0], off[0], r0);"
        result = f"sw::Pack<{out}, P> r0;"
        target = "r0.elem[e]"
    else:
        result = ""
        store = ""
        target = f"reinterpret_cast<{out}*>(p[0])[off[0] + e * u.step0]"
    body = "\n    ".join(loads)
    uniform_fields = "\n    ".join(fields) or "char unused;"
    uniform_init = "\n    ".join(init)
    return f"""{_describe(spec)}#include <stridewise/functors.h>
#include <stridewise/pack.h>
{spec.preamble}
struct Op {{
  typedef {_INDEX[spec.index_bits]} Index;
  typedef {t} T;
  typedef {m} M;
  typedef {spec.functor} F;
  enum {{ kArrays = {len(spec.arrays)}, kDims = {spec.ndim}, kPack = {spec.pack} }};
  typedef sw::Layout<kArrays, kDims> L;

  // Values every element shares: device scalars read once, host scalars, steps, periods.
  struct Uniform {{
    {uniform_fields}
  }};
  SW_HOST_DEVICE SW_INLINE static Uniform uniform(const sw::Slot* s) {{
    Uniform u;
    {uniform_init}
    return u;
  }}

  // P consecutive elements along the walk; off[k] is operand k's offset of the first.
  template <int P>
  SW_HOST_DEVICE SW_INLINE static void apply(char* const* p, const Index* off, const Uniform& u) {{
    {body}
    {result}
    SW_UNROLL for (int e = 0; e < P; ++e) {{
      {target} = sw::convert<{out}>(F()({", ".join(call_args)}));
    }}
    {store}
  }}
}};

{entry_point(spec)}
"""
