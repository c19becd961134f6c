"""Training-step bench: one step (forward, loss, backward, SGD update) of a small model whose
input encoding is periodic, `sin((x * freq) % period)` with learned frequencies, written
with stridewise's remainder and with torch's, each eager and under torch.compile.

Under torch.compile stridewise's remainder is a torch.library custom op inside the graph
(forward and backward); torch's is one Inductor fuses with its neighbours, so the compiled
torch row is the bar the custom op is measured against.

`run_train(device)` returns plain rows; `python -m stridewise.bench.train [cpu|cuda]` prints
them. Every variant's first-step loss and gradients are checked against eager torch before
anything is timed.
"""
from __future__ import annotations

__all__ = ["SIZES", "run_train", "format_rows"]

# (batch, features, hidden): small on the CPU (2 cores here), larger on a GPU
SIZES = {"cpu": (1024, 32, 64), "cuda": (65536, 256, 512)}
PERIOD = 2.0


def _model(torch, remainder, features: int, hidden: int, seed: int = 0):
    torch.manual_seed(seed)

    class PeriodicMLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.freq = torch.nn.Parameter(torch.rand(features) * 3 + 0.5)
            self.lin1 = torch.nn.Linear(features, hidden)
            self.lin2 = torch.nn.Linear(hidden, 1)

        def forward(self, x):
            h = torch.sin(remainder(x * self.freq, PERIOD))
            return self.lin2(torch.relu(self.lin1(h)))

    return PeriodicMLP()


def _step(torch, model, lr: float = 1e-3):
    def step(x, y):
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * p.grad
                p.grad = None
        return loss.detach()
    return step


def run_train(device: str = "cpu", compile_: bool = True) -> list[dict]:
    """Time one training step per variant.

    Returns
    -------
    Rows of {"impl", "time_s"} or {"impl", "error"}: impl is "torch eager", "stridewise
    eager", "torch compiled", "stridewise compiled".
    """
    import torch

    from stridewise import remainder
    from stridewise.bench.matrix import time_interleaved

    dev = "cuda" if device.startswith("cuda") else "cpu"
    batch, features, hidden = SIZES[dev]
    g = torch.Generator().manual_seed(1)
    x = (torch.rand(batch, features, generator=g) * 10).to(device)
    y = torch.rand(batch, 1, generator=g).to(device)
    variants = {}
    for lib, rem in (("torch", torch.remainder), ("stridewise", remainder)):
        for mode in ("eager", "compiled") if compile_ else ("eager",):
            model = _model(torch, rem, features, hidden).to(device)
            step = _step(torch, model)
            if mode == "compiled":
                step = torch.compile(step)
            variants[f"{lib} {mode}"] = (model, step)
    rows, fns = [], {}
    ref_model, _ = variants["torch eager"]
    ref_loss = torch.nn.functional.mse_loss(ref_model(x), y)
    ref_grads = torch.autograd.grad(ref_loss, list(ref_model.parameters()))
    for name, (model, step) in variants.items():
        try:
            # the first step's loss and gradients, before the update changes the weights
            loss = torch.nn.functional.mse_loss(model(x), y)
            grads = torch.autograd.grad(loss, list(model.parameters()))
            torch.testing.assert_close((loss, *grads), (ref_loss, *ref_grads), rtol=1e-4, atol=1e-5)
            step(x, y)        # compiles
        except Exception as e:  # noqa: BLE001 - a variant that cannot run is reported
            rows.append({"impl": name, "error": f"{type(e).__name__}: {str(e)[:200]}"})
            continue
        fns[name] = (lambda s: lambda: s(x, y))(step)
    for name, r in time_interleaved(fns, dev).items():
        rows.append({"impl": name, **r})
    return rows


def format_rows(rows: list[dict], device: str = "cpu") -> str:
    """A markdown table of `run_train` rows."""
    batch, features, hidden = SIZES["cuda" if device.startswith("cuda") else "cpu"]
    lines = [f"training step, batch {batch}, {features} features, hidden {hidden}, float32, {device}",
             "", "| implementation | time per step |", "|---|---|"]
    for r in rows:
        t = f"error: {r['error']}" if "error" in r else f"{r['time_s'] * 1e3:.3f} ms"
        lines.append(f"| {r['impl']} | {t} |")
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    dev = sys.argv[1] if len(sys.argv) > 1 else "cpu"
    print(format_rows(run_train(dev), dev))
