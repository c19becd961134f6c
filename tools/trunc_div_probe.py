"""Which formula torch's div(rounding_mode="trunc") and add(alpha=) compute, per device and dtype.

For float16, bfloat16 and float32, 2^20 random pairs: torch's result on the device against
formulas computed on the host in float64 (exact for these products and quotients' roundings
to float32, up to double-rounding cases of probability ~2^-29):
- trunc: "single" trunc(a / b) in float32, rounded once; "rounded" the quotient rounded to the
  dtype before trunc (Half's operator/); "reciprocal" trunc(a * (1 / b)) with 1 / b in float32;
- alpha: "fma" fma(b, alpha, a) in float32, "unfused" a + round32(alpha * b); alpha (and a
  number b) in float32 or rounded to the dtype ("narrow").
Tensor / tensor, tensor / number and tensor / one-element tensor. stridewise's own result is
compared too ("sw"). The formula that matches every element is torch's rule there.
    python tools/trunc_div_probe.py [--device cuda]
"""
import argparse

import numpy as np
import torch


def r32(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32).astype(np.float64)


def main() -> None:
    import stridewise as sw

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    dev = p.parse_args().device
    rng = np.random.default_rng(0)
    n = 1 << 20
    for dt in (torch.float16, torch.bfloat16, torch.float32):
        def to_dt(x):      # float64 array -> dt on the host, once rounded
            return torch.from_numpy(r32(x)).to(torch.float32).to(dt) if dt != torch.float32 \
                else torch.from_numpy(x).to(torch.float32)

        def rdt(x):        # round a float64 array to dt (through float32: exact for 16 bits
            return to_dt(x).to(torch.float64).numpy()   # when x is a float32 value)

        a = to_dt(rng.standard_normal(n) * rng.choice([1, 30, 3000], n))
        b = to_dt(rng.standard_normal(n) * rng.choice([0.01, 1, 30], n))
        a64, b64 = a.double().numpy(), b.double().numpy()
        ad, bd = a.to(dev), b.to(dev)
        cases = [("tensor", bd, b64), ("one-element", bd[:1], np.full(n, b64[0]))]
        cases += [(f"number {c}", c, np.full(n, c)) for c in (0.1, 1 / 3, 7.3, -2.7)]
        for label, divisor, d64 in cases:
            got = torch.div(ad, divisor, rounding_mode="trunc").cpu()
            number = isinstance(divisor, float)
            d32 = r32(d64) if number or dt == torch.float32 else d64
            forms = {"single": np.trunc(r32(a64 / d32)),
                     "rounded": np.trunc(rdt(r32(a64 / d32))),
                     "reciprocal": np.trunc(r32(a64 * r32(1 / d32)))}
            if number and dt != torch.float32:    # the number rounded to dt first
                dn = rdt(d64)
                forms["narrowed"] = np.trunc(rdt(r32(a64 / dn)))
            _report(dev, dt, "trunc", label, got, forms, lambda: sw.divide(ad, divisor, rounding_mode="trunc"), to_dt)
        for alpha in (0.3, -2.5, 3.0, 1 / 3):
            for label, other, o64 in (("tensor", bd, b64), ("number 1.7", 1.7, np.full(n, 1.7))):
                got = torch.add(ad, other, alpha=alpha).cpu()
                alphas = {"alpha32": r32(np.float64(alpha)), "alpha_narrow": rdt(np.array([alpha]))[0]}
                others = {"": r32(o64)} if label == "tensor" else {
                    " number32": r32(o64), " number_narrow": rdt(o64)}
                forms = {}
                for (ka, al), (ko, o) in ((x, y) for x in alphas.items() for y in others.items()):
                    forms[f"fma {ka}{ko}"] = r32(o * al + a64)
                    forms[f"unfused {ka}{ko}"] = r32(r32(o * al) + a64)
                _report(dev, dt, f"alpha {alpha:.4f}", label, got, forms,
                        lambda: sw.add(ad, other, alpha=alpha), to_dt)


def _report(dev, dt, what, label, got, forms, ours, to_dt) -> None:
    want = got.double().numpy()
    match = [k for k, v in forms.items()
             if np.array_equal(to_dt(v).double().numpy(), want, equal_nan=True)]
    miss = {k: int((~((to_dt(v).double().numpy() == want) | np.isnan(want))).sum())
            for k, v in forms.items() if k not in match}
    try:
        mine = ours().cpu()
        sw_ok = mine.dtype == got.dtype and torch.equal(mine.nan_to_num(), got.nan_to_num())
    except Exception as e:       # the probe reports, it does not stop
        sw_ok = f"error {type(e).__name__}: {e}"
    print(f"{dev} {str(dt)[6:]:9} {what:13} {label:16} matches {match or 'none'} "
          f"misses {miss} sw {sw_ok}", flush=True)


if __name__ == "__main__":
    main()
