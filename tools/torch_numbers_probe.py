"""Which value torch's kernels read for a Python number in a binary op, per device and dtype.

For each op and 16-bit dtype, torch's op(x, number) is compared with three formulas computed
with tensors only: the number rounded to x's dtype first ("narrowed"), the number in float32
("float32"), and for division x times the float32 reciprocal ("reciprocal"). The formula that
matches every element is torch's rule there; stridewise's ElementwiseOp.torch_numbers follows it.
    python tools/torch_numbers_probe.py [--device cuda]
"""
import argparse

import numpy as np
import torch

OPS = ["add", "sub", "mul", "div", "floor_divide", "remainder", "fmod", "eq", "lt", "pow",
       "maximum", "minimum", "atan2", "copysign"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    dev = p.parse_args().device
    rng = np.random.default_rng(0)
    for dt in (torch.float16, torch.bfloat16, torch.float32):
        x = (torch.from_numpy(rng.standard_normal(1 << 16)) * 100).to(dt).to(dev)
        for name in OPS:
            f = getattr(torch, name)
            for c in (0.1, 1 / 3, 7.3):
                try:
                    got = f(x, c)
                except (TypeError, RuntimeError):
                    print(f"{dev} {str(dt)[6:]:9} {name:12} takes no number")
                    break
                forms = {"narrowed": f(x, torch.tensor(c, dtype=dt, device=dev)).to(got.dtype),
                         "float32": f(x.float(), torch.tensor(c, device=dev)).to(got.dtype)}
                if name == "div":
                    forms["reciprocal"] = (x.float() * (1 / torch.tensor(c, device=dev))).to(dt)
                match = [k for k, v in forms.items() if torch.equal(v.nan_to_num(), got.nan_to_num())]
                print(f"{dev} {str(dt)[6:]:9} {name:12} {c:.4f} matches {match or 'none'}")


if __name__ == "__main__":
    main()
