"""Codegen: one small C++ translation unit per kernel variant.

The unit includes the header library, defines the element functor's call and an `Op`
that knows how each operand is read in this mode, and exposes one `extern "C"` entry point
from the backend. Grid and block size stay out of the source, so a new launch geometry
never recompiles.
"""
from __future__ import annotations

import struct

from dataclasses import dataclass

from stridewise.operands.dtypes import DType
from stridewise.codegen import words

__all__ = ["KernelSpec", "generate", "slot_format", "user_functor", "user_block"]

_INDEX = {32: "sw::i32", 64: "sw::i64"}
# kinds read as one row for a column of rows (rows with share_rows), and kinds loaded shifted
_REPEATED = ("repeated", "repeated_shifted")
_SHIFTED = ("shifted", "repeated_shifted")


@dataclass(frozen=True)
class KernelSpec:
    """Everything that selects one compiled kernel.

    Attributes
    ----------
    op : short op name, used in the entry point's name.
    functor : C++ type of the element functor. In the return form (`out_types` empty) it maps
        OpMath values to the one output's OpMath value; in the reference form it is called as
        `F()(inputs and output references in the order of args)` and returns nothing.
    preamble : C++ code the functor needs (user kernels), placed before the Op.
    arrays : dtype of each array operand, outputs first.
    params : dtype of each host scalar parameter.
    args : functor argument order; ("array", k), ("param", j) or, in the reference form,
        ("out", k) per argument.
    arg_types : per input argument, the (storage, OpMath) C types it is converted through; empty
        means every input goes through the compute dtype (`T`, then `M`).
    out_types : reference form only: the C type of each output's local (OpMath of its dtype).
    reads : reference form only: per output, whether the functor reads it (it is loaded first).
    keep_loads : dense and repeated operands' packs load through sw::load_kept (pack.h).
    row_heads : rows whose output rows start off a pack: the kernel peels each row's head.
    row_spacing : rows with a repeated row: the rows of a shared batch lie this many apart, so
        that they peel alike (Layout.row_spacing).
    wrapped : repeated operands are one period each (Layout.wrapped, short_rows).
    max_registers : the registers per thread a block of the algorithm's block_size can have
        (65536 / block_size, where that is below 255; 0 otherwise): an explicit block size
        always launches, whatever the kernel would like to use.
    tile : tiled with `Tiled(stage=True)`: the tile's width in packs, compiled in (it sizes
        the shared memory the staged operands go through); 0 otherwise.
    index : user kernels: the array operand that is the flat loop index (_usercall.index_view;
        read as its offset, never loaded), placed right after the outputs; -1 for none.
    options : NVRTC ProgramOptions fields a user kernel asks for, as (name, value) pairs.
    cheap : the op's arithmetic costs less than moving its bytes (Op::kCheap: the host's
        threads start by bytes, cpu/loops.h).
    compute : the dtype that names the computation (tuning, description; `T` in the Op).
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
    arg_types: tuple = ()
    out_types: tuple = ()
    reads: tuple = ()
    keep_loads: bool = False
    tile: int = 0
    index: int = -1
    options: tuple = ()
    row_heads: bool = False
    wrapped: bool = False
    max_registers: int = 0
    row_spacing: int = 1
    cheap: bool = False

    @property
    def entry(self) -> str:
        return f"stridewise_{self.op}_{self.mode}"

    @property
    def nslots(self) -> int:
        na, d = len(self.arrays), self.ndim
        return na + 2 + d + na * d + na + sum(_slots(p) for p in self.params)

    @property
    def reference(self) -> bool:
        """The functor takes its outputs by reference (user kernels, outputs or none)."""
        return bool(self.out_types) or self.nout == 0

    @property
    def one_dtype(self) -> bool:
        """A one-output return form whose operands and output all have the compute dtype: what
        the multi-lane forms (Apply2 pairs, Apply4 words) take."""
        return self.one_dtype_in and self.arrays[0] is self.compute

    @property
    def one_dtype_in(self) -> bool:
        """one_dtype but for the output's dtype (a comparison's bool)."""
        dt = self.compute
        return (not self.out_types and self.nout == 1 and self.kinds[0] == "dense"
                and not self.arg_types and all(a is dt for a in self.arrays[1:])
                and all(q is dt for q in self.params))


def _slots(param) -> int:
    """Argument slots a host parameter fills: one, or a raw array's record (_usercall.RawType)."""
    return getattr(param, "slots", 1)


def slot_format(spec: KernelSpec) -> str:
    """`struct` format of the slot record the entry point reads (see pack.h Layout)."""
    na, d = len(spec.arrays), spec.ndim
    return "<" + "Q" * na + "qq" + "q" * d + "q" * (na * d) + "q" * na + "".join(
        p.slot for p in spec.params)


def record_template(record, static: tuple):
    """What each backend's warm launcher fills per call: (template, nptr, values, at), the slot
    record (slot_format) with its static slots packed (n, aux, shape, strides, periods), the
    number of array pointers before them, the scalar parameters' Struct after them and its
    byte offset.
    """
    body = record.format.lstrip("<")
    nptr = len(body) - len(body.lstrip("Q"))
    assert body[nptr:nptr + len(static)] == "q" * len(static), record.format
    template = bytearray(record.size)
    struct.pack_into(f"<{len(static)}q", template, 8 * nptr, *static)
    values = struct.Struct("<" + body[nptr + len(static):])
    return template, nptr, values, 8 * (nptr + len(static))


def _describe(spec: KernelSpec) -> str:
    outs = ", ".join(a.name for a in spec.arrays[: spec.nout])
    ins = ", ".join(
        spec.arrays[i].name if src == "array" else "the index" if src == "index"
        else f"scalar {spec.params[i].name}" for src, i in spec.args if src != "out")
    return (f"// {spec.op}: {outs} = f({ins}), computed in {spec.compute.name}\n"
            f"// mode {spec.mode} | pack {spec.pack} | int{spec.index_bits} index | "
            f"{spec.ndim} merged dims | operands: {', '.join(spec.kinds)}"
            + (f" | staged in shared memory, tiles {spec.tile} packs wide" if spec.tile else "") + "\n")


def _wrapped(spec: KernelSpec, k: int) -> bool:
    """A repeated operand that is one period (short_rows): read once per thread from any
    phase, wrapping at the period's end (pack.h load_wrapped; kernels.cuh resident_kernel)."""
    return spec.wrapped and spec.kinds[k] == "repeated"


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
        elif kind == "periodic" or _wrapped(spec, k):
            fields.append(f"Index period{k};")
            init.append(f"u.period{k} = (Index)s[L::kPeriod + {k}].i;")
    at = 0
    for j, dt in enumerate(spec.params):
        fields.append(f"{dt.ctype} p{j};")
        init.append(f"u.p{j} = sw::slot_get<{dt.ctype}>(s[L::kParam + {at}]);")
        at += _slots(dt)
    if spec.index >= 0:
        fields.append("sw::i64 n;")
        init.append("u.n = s[L::kN].i;")
    return fields, init


def _load(k: int, dt: DType, kind: str, slot: int = 0, keep: bool = False,
          index: int = -1, wrapped: bool = False) -> tuple[str, str, str]:
    """(field of In<P>, statement loading operand k into it, expression of element e);
    `slot`: a periodic operand's place among the periodic ones (its table on the device);
    `keep`: dense and repeated packs load through sw::load_kept; `wrapped`: see _wrapped."""
    c = dt.ctype
    if wrapped:
        return (f"sw::Pack<{c}, P> a{k};",
                f"in.a{k} = sw::load_wrapped<{c}, P>(p[{k}], off[{k}], u.period{k});", f"in.a{k}.elem[e]")
    if k == index:   # the flat index: the operand's offset (it reads like an output: dense or strided)
        step = "e" if kind == "dense" else f"e * u.step{k}" if kind == "strided" else "0"
        return "Index a{k};".format(k=k), f"in.a{k} = off[{k}];", f"(sw::i64)(in.a{k} + {step})"
    # staged: p[k] and off[k] point into the kernel's transposed tile (host) or block (device),
    # which an L2 policy must not reach; repeated: read as dense, once per batch
    if kind in ("dense", "staged", "repeated"):
        load = "load_kept" if keep and kind != "staged" else "load_pack"
        return (f"sw::Pack<{c}, P> a{k};", f"in.a{k} = sw::{load}<{c}, P>(p[{k}], off[{k}]);",
                f"in.a{k}.elem[e]")
    if kind in _SHIFTED:    # dense, its packs not aligned where the output's are (pack.h)
        return (f"sw::Pack<{c}, P> a{k};", f"in.a{k} = sw::load_shifted<{c}, P>(p[{k}], off[{k}]);",
                f"in.a{k}.elem[e]")
    if kind == "bcast":
        return f"{c} a{k};", f"in.a{k} = sw::load_one<{c}>(p[{k}], off[{k}]);", f"in.a{k}"
    if kind == "uniform":
        return "", "", f"u.v{k}"
    if kind == "strided":
        return (f"{c} a{k}[P];", f"SW_UNROLL for (int e = 0; e < P; ++e) "
                f"in.a{k}[e] = sw::load_one<{c}>(p[{k}], off[{k}] + e * u.step{k});", f"in.a{k}[e]")
    if kind == "periodic":  # one division per pack (done by the loop); stepped within it
        # On the host, for a vectorized fast path (functors.h HasFast) over at most 16 lanes,
        # the step is a mask: with `if`, GCC 12 kept the loads under control flow and handed
        # them to the vector loop through the stack (a failed store forward per pack); longer
        # packs, and functors without `fast`, measured faster with the branch. On the
        # device a short period is read from the kernel's table of its packs
        # (pack.h period_table; table `slot` among the periodic operands, entry ph at
        # ph * kPack), a long one stepped with a branch.
        return (f"{c} a{k}[P];", f"{{\n"
                f"#if defined(__CUDA_ARCH__)\n"
                f"    if (sw::period_table<kPack>(u.period{k}, {dt.itemsize})) {{\n"
                f"      const char* table = sw::period_tables<kPeriodicOperands>() + "
                f"{slot} * sw::kPeriodTableBytes;\n"
                f"      const sw::Pack<{c}, P> v = sw::load_pack<{c}, P>(table, off[{k}] * kPack);\n"
                f"      SW_UNROLL for (int e = 0; e < P; ++e) in.a{k}[e] = v.elem[e];\n"
                f"    }} else\n"
                f"#endif\n"
                f"    {{\n      Index ph = off[{k}];\n"
                f"      SW_UNROLL for (int e = 0; e < P; ++e) {{\n"
                f"        in.a{k}[e] = sw::load_one<{c}>(p[{k}], ph);\n"
                f"#if defined(__CUDA_ARCH__)\n"
                f"        if (++ph == u.period{k}) ph = 0;\n"
                f"#else\n"
                f"        if constexpr (P <= 16 && sw::HasFast<F>::value) {{\n"
                f"          ++ph;\n"
                f"          ph &= -(Index)(ph != u.period{k});\n"
                f"        }} else if (++ph == u.period{k}) {{\n"
                f"          ph = 0;\n"
                f"        }}\n"
                f"#endif\n      }}\n    }}\n    }}", f"in.a{k}[e]")
    raise ValueError(kind)


def _convert(raw: str, raw_ctype: str, types) -> str:
    """The expression converting `raw` through (storage, OpMath) C types; None: T then M."""
    if types is None:
        # a bool is 0 or 1 in every type, so it skips T: bool to float16 and on to float was
        # two conversions an element (a multiply by a bool mask ran 0.18x torch CPU)
        return f"sw::convert<M>({raw})" if raw_ctype == "bool" else f"sw::convert<M>(sw::convert<T>({raw}))"
    store, math = types
    if store != raw_ctype:
        raw = f"sw::convert<{store}>({raw})"
    return raw if math == store else f"sw::convert<{math}>({raw})"


def _resume_lines(source: str) -> str:
    """Point `#line` back at the generated file after each block of user code, so compiler
    messages name the user's own lines ("operation", "preamble") and nothing else."""
    lines = source.split("\n")
    for n, line in enumerate(lines):
        if line == RESUME:
            lines[n] = f'#line {n + 2} "generated"'
    return "\n".join(lines)


RESUME = "#line SW_RESUME"


def user_block(label: str, code: str) -> str:
    """User code tagged with `#line 1 "label"` so diagnostics carry the user's line numbers."""
    return f'#line 1 "{label}"\n{code}\n{RESUME}'


def user_functor(params, operation: str, typedefs=(), prelude: str = "", loop_prep: str = "",
                 after_loop: str = "") -> str:
    """A functor whose body is the user's operation, with named parameters.

    Parameters
    ----------
    params : (C type, name, is_output) per argument, in call order; inputs are const values,
        outputs references the kernel stores after the call.
    typedefs : (placeholder, C type) pairs visible to the operation (CuPy's `T`, `U`, ...).
    prelude : generated statements before the user's code (the flat index `i`).
    loop_prep, after_loop : user statements run before and after the operation, in its scope.
    """
    sig = ", ".join(f"{c}& {n}" if is_out else f"const {c} {n}" for c, n, is_out in params)
    types = "".join(f"  typedef {c} {letter};\n" for letter, c in typedefs)
    body = "".join(user_block(label, code.rstrip() + ";") + "\n"
                   for label, code in (("loop_prep", loop_prep), ("operation", operation),
                                       ("after_loop", after_loop)) if code or label == "operation")
    return (f"struct UserOp : sw::UserMath {{\n{types}"
            f"  SW_HOST_DEVICE SW_INLINE void operator()({sig}) const {{\n"
            f"{prelude}{body}  }}\n}};\n")


def _pairs(spec: KernelSpec) -> bool:
    """Whether the Apply2 branch applies: a one-dtype return form of a 16-bit float
    (functors.h Apply2)."""
    return spec.compute.name in ("float16", "bfloat16") and spec.one_dtype


def _pair_of(raws) -> list:
    """Elements e and e + 1 of each operand as one Pair (a broadcast operand: its value twice)."""
    return [f"sw::pair({r}, {r.replace('[e]', '[e + 1]')})" for r in raws]


def _prepared(spec: KernelSpec):
    """The repeated or broadcast operand that is the last input of a return-form functor (an
    outer product's divisor, a column divisor), which the Op prepares once per batch
    (repeated) or per pack (bcast: one value along the pack) (functors.h Prepared); None
    where there is none."""
    inputs = [a for a in spec.args if a[0] != "out"]
    if spec.reference or not inputs or inputs[-1][0] != "array":
        return None
    k = inputs[-1][1]
    # A broadcast divisor pays for its prepared form (registers for the batch's divisors)
    # only where the functor then runs two lanes per instruction (16-bit, functors.h Fast2):
    # a 3-d outer product went 64% -> 86% of write in float16, and in bfloat16 109 -> 87 us,
    # but bfloat16's column divisors beside a dense dividend 135 -> 145 us (they were at 96%
    # of copy), so there it is prepared in outer products only (beside a repeated row).
    outer = any(kind in _REPEATED for kind in spec.kinds)
    two_lanes = _pairs(spec) and (spec.compute.name == "float16" or outer)
    kinds = (*_REPEATED, "bcast") if two_lanes else _REPEATED
    return k if spec.kinds[k] in kinds and inputs.count(inputs[-1]) == 1 else None


def _uniform_last(spec: KernelSpec) -> bool:
    """Whether the last input is one value for every element (a host scalar, or a device
    scalar the kernel reads once), which the Op prepares once per thread with the uniforms."""
    inputs = [a for a in spec.args if a[0] not in ("out", "index")]
    if spec.reference or not inputs:
        return False
    src, k = inputs[-1]
    return src == "param" or spec.kinds[k] == "uniform"


def generate(spec: KernelSpec, entry_point) -> str:
    """C++ source of `spec`; `entry_point(spec)` is the backend's extern "C" wrapper."""
    t, m = spec.compute.ctype, f"typename sw::OpMath<{spec.compute.ctype}>::type"
    ref = spec.reference
    reads = spec.reads or (False,) * spec.nout
    fields, init = _uniform_fields(spec)
    in_fields, loads, reloads, exprs = [], [], [], {}
    for k in range(len(spec.arrays)):
        if k < spec.nout and not (ref and reads[k]):
            continue
        field, stmt, expr = _load(k, spec.arrays[k], spec.kinds[k], spec.kinds[:k].count("periodic"),
                                  spec.keep_loads, spec.index, _wrapped(spec, k))
        if field:
            in_fields.append(field)
            loads.append(stmt)
            if spec.kinds[k] not in _REPEATED:
                reloads.append(stmt)
        exprs[k] = expr
    results, refs, stores, targets = [], [], [], []
    for k in range(spec.nout):
        c = spec.arrays[k].ctype
        if spec.kinds[k] == "dense":
            results.append(f"sw::Pack<{c}, P> r{k};")
            refs.append(f"sw::Pack<{c}, P>& r{k} = out.r{k};")
            stores.append(f"sw::store_pack<{c}, P>(p[{k}], off[{k}], out.r{k});")
            targets.append(f"r{k}.elem[e]")
        else:
            targets.append(f"reinterpret_cast<{c}*>(p[{k}])[off[{k}] + e * u.step{k}]")
    raws, call_args, arg_types, n_in = [], [], [], 0
    prepared, pairs = _prepared(spec), _pairs(spec)
    for src, i in spec.args:
        if src == "out":
            call_args.append(f"y{i}")
            continue
        if src == "index":
            call_args.append(f"sw::Indexer{{{exprs[i]}, u.n}}")
            continue
        raw, ctype = ((exprs[i], spec.arrays[i].ctype) if src == "array"
                      else (f"u.p{i}", spec.params[i].ctype))
        types = spec.arg_types[n_in] if spec.arg_types else None
        raws.append(raw)
        # A pack is widened as a whole where the host can (types.h Widened), but for the
        # prepared operand, which its load prepares element by element.
        pack = raw.endswith(".elem[e]")
        whole = pack and i != prepared
        if pack and types is None and spec.arrays[i] is spec.compute:
            if whole:
                refs.append(f"const typename sw::WidenedOf<M, P, {ctype}>::type w{i}({raw[:-3]});")
            call_args.append(f"w{i}[e]" if whole else f"sw::widen<M>({raw[:-3]}, e)")
        elif whole and ctype == "sw::half" and (types[0] if types else t) != ctype:
            # float16 read as another type: through float (exact)
            refs.append(f"const typename sw::WidenedOf<float, P, {ctype}>::type w{i}({raw[:-3]});")
            call_args.append(_convert(f"w{i}[e]", "float", types))
        else:
            call_args.append(_convert(raw, ctype, types))
        arg_types.append("M" if types is None else types[1])
        n_in += 1
    call = f"F()({', '.join(call_args)})"
    fast_args = list(call_args)
    d2 = None       # the divisor pair of the two-lane form (functors.h Fast2), where prepared
    if _uniform_last(spec):
        # a uniform last input (a host scalar, a device scalar read once): prepared once per
        # thread with the uniforms, as a shared row's divisor is per batch (functors.h
        # Prepared): the fast path and its range check then take the prepared form
        fields.append(f"typename sw::Prepared<F, {arg_types[-1]}>::type dp;")
        init.append(f"u.dp = sw::prepare<F>({call_args[-1]});")
        fast_args[-1] = "u.dp"
        if pairs:   # and as a pair
            fields.append("typename sw::Fast2<F, T>::D d2;")
            init.append(f"u.d2 = sw::Fast2<F, T>::prepare(sw::pair({raws[-1]}, {raws[-1]}));")
            d2 = "u.d2"
    if prepared is not None:
        # prepared with its load, once per batch; the pack's fast path takes it as it is
        # (a kernel keeps only the form its branch reads: functors.h Fast2 or Prepared)
        k = prepared
        one = spec.kinds[k] == "bcast"      # one value along the pack: prepared once
        pick, pick2 = ("", "") if one else ("[e]", "[e / 2]")
        in_fields.append(f"typename sw::Prepared<F, {arg_types[-1]}>::type d{k}{'' if one else '[P]'};")
        preps = [f"in.d{k} = sw::prepare<F>({call_args[-1]});" if one else
                 f"SW_UNROLL for (int e = 0; e < P; ++e) in.d{k}[e] = sw::prepare<F>({call_args[-1]});"]
        fast_args[-1] = f"in.d{k}{pick}"
        if pairs:
            d2 = f"in.d2_{k}{pick2}"
            in_fields.append(f"typename sw::Fast2<F, T>::D d2_{k}{'' if one else '[(P + 1) / 2]'};")
            preps.append(f"in.d2_{k} = sw::Fast2<F, T>::prepare(sw::pair(in.a{k}, in.a{k}));" if one else
                         f"SW_UNROLL for (int e = 0; e + 1 < P; e += 2) in.d2_{k}[e / 2] = "
                         f"sw::Fast2<F, T>::prepare(sw::pair(in.a{k}.elem[e], in.a{k}.elem[e + 1]));")
        if words.applies(spec):     # and as words (codegen/words.py)
            field, prep = words.prepared_fields(k)
            in_fields.append(field)
            preps.append(prep)
        loads += preps
        if one:    # a row's own divisor: each row of a shared batch prepares its own
            reloads += preps
    if ref:
        step = [f"{ot} y{k} = {_convert(exprs[k], spec.arrays[k].ctype, (spec.arrays[k].ctype, ot)) if reads[k] else ot + '()'};"
                for k, ot in enumerate(spec.out_types)]
        step.append(call + ";")
        step += [f"{targets[k]} = {_convert(f'y{k}', ot, (spec.arrays[k].ctype,) * 2)};"
                 for k, ot in enumerate(spec.out_types)]
        # a user operation's loop: `omp simd` where the host has vector math (user.h), only
        # where elements are independent by construction (no raw arrays, no index i)
        simd = spec.functor == "UserOp" and spec.index < 0 and \
            all(isinstance(q, DType) for q in spec.params)
        loop = "SW_USER_LOOP(P)" if simd else "SW_UNROLL"
        compute = (f"{loop} for (int e = 0; e < P; ++e) {{\n      "
                   + "\n      ".join(step) + "\n    }")
    elif spec.kinds[0] == "dense":
        # The pack's results first, through the functor's branch-free fast path where it has
        # one and the path allows (functors.h HasFast, Path), then one conversion of the whole
        # pack (pairwise where the device has one: convert_pack). The fast loop is an `omp
        # simd` loop with an integer flag on the host, so GCC 12 vectorizes it (functors.h
        # SW_FAST_LOOP, FastFlag), and unrolled on the device. A pack with a flagged lane is
        # redone by the functor itself, in the same kind of loop where its exact form is
        # branch-free (functors.h VectorExact), else as a call where the kernel asks for one
        # (functors.h call_exact, kOutline). A functor without a fast path runs in the vector
        # loop too: GCC's SLP vectorizer left its selects (maximum, clip, comparisons) scalar.
        outlined = f"sw::call_exact<F, kOutline>({', '.join(call_args)})"

        def elementwise(fast_args):
            fast = f"sw::call_fast<F, P>({', '.join(['slow'] + fast_args)})"
            wide = f"SW_SIMD_OR(slow) for (int e = 0; e < P; ++e) {fast.replace('call_fast', 'call_wide')};"
            if pairs and fast_args == call_args:
                # the check two lanes at a time where the functor has that form (functors.h Wide2)
                wide = (f"if constexpr (sw::Wide2Pack<P, F, T>::value) {{\n"
                        f"          typedef sw::Wide2Pack<P, F, T> W2;   // dependent on P: compiled only if taken\n"
                        f"          typename W2::Flag flag = {{}};\n"
                        f"          SW_UNROLL for (int e = 0; e < P; e += 2) W2::wide({', '.join(_pair_of(raws))}, flag);\n"
                        f"          slow = W2::slow(flag);\n"
                        f"        }} else {{\n          {wide}\n        }}")
            # a functor that redoes a pack at once takes the exact form's operands as arrays
            # (functors.h ExactPack); operations with outputs or an index among them have none
            exact_pack = "" if len(arg_types) != len(call_args) else (
                f"        if constexpr (sw::ExactPack<F>::value) {{\n"
                f"          {' '.join(f'{t} x{i}[P];' for i, t in enumerate(arg_types))}\n"
                f"          SW_UNROLL for (int e = 0; e < P; ++e) {{ "
                + " ".join(f"x{i}[e] = {a};" for i, a in enumerate(call_args)) + " }\n"
                f"          sw::exact_pack<F, P>(y, {', '.join(f'x{i}' for i in range(len(call_args)))});\n"
                f"        }} else\n")
            # a flagged pack's warp redoes every pack in the exact form (functors.h FlagsFirst;
            # on the host the check is a vector reduction and the form a vector loop)
            flags_first = (f"{wide}\n        slow = sw::any_lane(slow);\n"
                           f"        if (!slow) SW_FAST_LOOP(P) for (int e = 0; e < P; ++e) y[e] = {fast};")
            flags_first_short = flags_first.replace("\n", "\n  ")   # nested one level deeper
            return (f"typedef decltype(F()({', '.join(f'{a}()' for a in arg_types)})) R;\n"
                    f"    R y[P];\n"
                    f"    if constexpr (sw::HasFast<F>::value && kPath != sw::kExact) {{\n"
                    f"      if constexpr (kShort && sw::ShortForm<F>::value) {{   // functors.h ShortForm\n"
                    f"        sw::FastFlag far = false;\n"
                    f"        SW_UNROLL for (int e = 0; e < P; ++e) {fast.replace('call_fast', 'call_far').replace('(slow', '(far')};\n"
                    f"        if (!sw::any_lane(far)) {{\n"
                    f"          SW_UNROLL for (int e = 0; e < P; ++e) y[e] = {fast.replace('call_fast', 'call_short')};\n"
                    f"        }} else {{\n"
                    f"          {flags_first_short}\n"
                    f"        }}\n"
                    f"      }} else if constexpr (sw::FlagsFirst<F>::value) {{   // functors.h FlagsFirst\n"
                    f"        {flags_first}\n"
                    f"      }} else {{\n"
                    f"        SW_FAST_LOOP(P) for (int e = 0; e < P; ++e) y[e] = {fast};\n"
                    f"      }}\n"
                    f"      if (kPath == sw::kEither && slow) {{\n"
                    + exact_pack +
                    f"        if constexpr (sw::VectorExact<F>::value) {{\n"
                    f"          SW_FAST_LOOP(P) for (int e = 0; e < P; ++e) y[e] = {call};\n"
                    f"        }} else {{\n"
                    f"          SW_UNROLL for (int e = 0; e < P; ++e) y[e] = {outlined};\n"
                    f"        }}\n"
                    f"      }}\n"
                    f"    }} else {{\n"
                    f"      SW_FAST_LOOP(P) for (int e = 0; e < P; ++e) y[e] = {call};\n"
                    f"    }}\n"
                    f"    sw::convert_pack<P, {spec.arrays[0].ctype}>(r0.elem, y);")

        def nested(code):
            return code.replace("\n", "\n  ")

        compute = elementwise(fast_args)
        if words.applies(spec):
            compute = words.wrap(spec, compute, raws, prepared)
        if pairs:
            pair = _pair_of(raws)
            compute = (f"if constexpr (sw::Apply2Pack<P, F, T>::value) {{\n"
                       f"      SW_UNROLL for (int e = 0; e < P; e += 2)\n"
                       f"        sw::set_pair(r0.elem + e, sw::Apply2Pack<P, F, T>::run({', '.join(pair)}));\n"
                       "    } else {\n      " + nested(compute) + "\n    }")
        if pairs and d2 is not None:
            # Two lanes per instruction with the prepared divisor pairs; a pack past the form
            # is redone element by element (functors.h Fast2: its check comes first, and with
            # kVote the warp decides as one, as FlagsFirst) with the divisors as loaded, or a
            # uniform's as prepared once per thread: a shared row's prepared element form
            # beside its pairs took the kernels from 48-64 to 80-128 registers, and narrow data
            # lost more than the rest gained (docs/decisions.md).
            pair[-1] = d2
            again = elementwise(fast_args if d2 == "u.d2" else call_args)
            compute = (f"if constexpr (sw::Fast2Pack<P, F, T>::value && kPath != sw::kExact) {{\n"
                       f"      typedef sw::Fast2Pack<P, F, T> F2;   // dependent on P: compiled only if taken\n"
                       f"      typename F2::Flag flag = {{}};\n"
                       f"      typename F2::Part part[P / 2];\n"
                       f"      SW_UNROLL for (int e = 0; e < P; e += 2) part[e / 2] = F2::begin({', '.join(pair)}, flag);\n"
                       f"      if (!(F2::kVote ? sw::any_lane(F2::slow(flag)) : F2::slow(flag))) {{\n"
                       f"        SW_UNROLL for (int e = 0; e < P; e += 2)\n"
                       f"          sw::set_pair(r0.elem + e, F2::finish({', '.join(pair)}, part[e / 2]));\n"
                       "      } else {\n        " + nested(nested(again)) + "\n      }\n"
                       "    } else {\n      " + nested(compute) + "\n    }")
    else:
        compute = (f"SW_UNROLL for (int e = 0; e < P; ++e) "
                   f"{targets[0]} = sw::convert<{spec.arrays[0].ctype}>({call});")
    staged, repeated, periodic = (sum(1 << k for k, kind in enumerate(spec.kinds) if kind in names)
                                  for names in (("staged",), _REPEATED, ("periodic",)))
    sizes = " : ".join([f"k == {k} ? {dt.itemsize}" for k, dt in enumerate(spec.arrays[:-1])]
                       + [str(spec.arrays[-1].itemsize)])
    uniform_fields = "\n    ".join(fields) or "char unused;"
    uniform_init = "\n    ".join(init)
    source = f"""{_describe(spec)}#include <stridewise/functors.h>
#include <stridewise/pack.h>
{spec.preamble}
struct Op {{
  typedef {_INDEX[spec.index_bits]} Index;
  typedef {t} T;
  typedef {m} M;
  typedef {spec.functor} F;
  enum {{ kArrays = {len(spec.arrays)}, kDims = {spec.ndim}, kPack = {spec.pack}, kStaged = {staged},
         kRepeated = {repeated}, kPeriodic = {periodic}, kRowHeads = {int(spec.row_heads)},
         kRowSpacing = {spec.row_spacing},
         kPeriodicOperands = {spec.kinds.count("periodic")}, kShifted = {int(any(k in _SHIFTED for k in spec.kinds))},
         kBcast = {int("bcast" in spec.kinds)}, kCheap = {int(spec.cheap)},
         kOutputs = {spec.nout}, kRecompute = {int(not spec.reference and spec.index < 0)} }};
  // kOutputs: the first operands, written. kRecompute: an element computed twice is written
  // the same both times unless an output is also an input (a built-in op: no outputs by
  // reference, no index); cpu/loops.h's flat tail relies on it.
  typedef sw::Layout<kArrays, kDims> L;

  // Operand k's element size, whether the kernel stages it (bit k of kStaged) in a tile or
  // block it transposes first (tiled), whether it is the same row for every index of dim
  // kDims - 2 (bit k of kRepeated; rows loads it once per column of rows), and whether it is
  // read at the flat index mod its period (bit k of kPeriodic; short_rows); all fold to
  // constants in the kernels' unrolled operand loops.
  SW_HOST_DEVICE static constexpr int size(int k) {{ return {sizes}; }}
  SW_HOST_DEVICE static constexpr bool staged(int k) {{ return (kStaged >> k) & 1; }}
  SW_HOST_DEVICE static constexpr bool repeated(int k) {{ return (kRepeated >> k) & 1; }}
  SW_HOST_DEVICE static constexpr bool periodic(int k) {{ return (kPeriodic >> k) & 1; }}

  // Values every element shares: device scalars read once, host scalars, steps, periods.
  struct Uniform {{
    {uniform_fields}
  }};
  SW_HOST_DEVICE SW_INLINE static Uniform uniform(const sw::Slot* s) {{
    Uniform u;
    {uniform_init}
    return u;
  }}

  // The operands of P consecutive elements along the walk, off[k] being operand k's offset
  // of the first. Loading is its own phase so a kernel can issue several packs' loads
  // before it stores anything (stores may alias later loads, so the compiler cannot).
  template <int P> struct In {{
    {chr(10).join("    " + x for x in in_fields).lstrip() or "char unused;"}
  }};
  template <int P>
  SW_HOST_DEVICE SW_INLINE static In<P> load(char* const* p, const Index* off, const Uniform& u) {{
    In<P> in;
    {chr(10).join("    " + x for x in loads).lstrip()}
    return in;
  }}
  // The next pack of a batch that shares `first`'s repeated operands (rows, one column of rows).
  template <int P>
  SW_HOST_DEVICE SW_INLINE static In<P> reload(char* const* p, const Index* off, const Uniform& u,
                                               const In<P>& first) {{
    In<P> in = first;
    {chr(10).join("    " + x for x in reloads).lstrip()}
    return in;
  }}
  // The pack's dense outputs, computed into `out` along `kPath` (functors.h Path; kFast
  // returns whether a lane needs the exact form), then stored by `put`: apart, so that a
  // kernel can take a batch's packs through the fast path behind one branch. kPure: compute
  // writes nothing itself (every output is dense).
  template <int P> struct Out {{
    {" ".join(results) or "char unused;"}
  }};
  enum {{ kPure = {int(all(spec.kinds[k] == "dense" for k in range(spec.nout)))} }};
  template <int P, int kPath = sw::kEither, bool kShort = false, bool kOutline = false>
  SW_HOST_DEVICE SW_INLINE static sw::FastFlag compute(char* const* p, const Index* off, const Uniform& u,
                                                       const In<P>& in, Out<P>& out) {{
    sw::FastFlag slow = 0;
    {" ".join(refs)}
    {compute}
    return kPath == sw::kFast ? slow : sw::FastFlag(0);
  }}
  template <int P>
  SW_HOST_DEVICE SW_INLINE static void put(char* const* p, const Index* off, const Out<P>& out) {{
    {" ".join(stores)}
  }}
  template <int P>
  SW_HOST_DEVICE SW_INLINE static void apply(char* const* p, const Index* off, const Uniform& u) {{
    Out<P> out;
    compute<P>(p, off, u, load<P>(p, off, u), out);
    put<P>(p, off, out);
  }}
}};

{entry_point(spec)}
"""
    return _resume_lines(source) if RESUME in source else source
