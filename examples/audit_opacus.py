"""Audit a small DP-SGD model trained with Opacus on CPU, using input-space canaries.

One training run (Steinke, Nasr & Jagielski 2023): m canaries, each an out-of-distribution input
with a random label, are each added to the training set by an independent fair coin. After
training, each canary is scored by the model's log-likelihood of its label (higher = looks
included), and ``renyi.audit`` turns the scores into a lower bound on ε, printed beside the
certified ε that renyi's accountant gives for the same run.

Only the one-run audit is reported: it is the one method valid for this design. The
``threshold`` and ``gdp`` methods count every canary as an independent trial (one training run
per canary); here all canaries share one model, so their scores are dependent, and those
methods' numbers would prove nothing (``audit(..., design="one_run")`` refuses them).

    python examples/audit_opacus.py                    # a minute or two on a laptop CPU
    python examples/audit_opacus.py --tiny             # seconds (what CI runs)
    python examples/audit_opacus.py --out audit-run    # also writes scores.csv and run.toml

With ``--out`` the scores and the declared run are written so the command line can redo the
comparison and draw it:

    renyi audit audit-run/scores.csv --delta 1e-5 --design one_run --event audit-run/run.toml --plot audit.png

An input-space (black-box) audit of a model trained for several epochs is far from tight: expect
a lower bound well below the certified ε. A lower bound *above* it would mean the training code
does not do what the accountant was told.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np
import torch
from opacus import PrivacyEngine
from torch import nn

import renyi
from renyi.audit import audit


def build_data(rng: np.random.Generator, n: int, m: int, dim: int, classes: int) -> tuple[np.ndarray, ...]:
    """Base data (a Gaussian cluster per class) and m canaries far outside it, random labels."""
    centres = rng.normal(0.0, 2.0, (classes, dim))
    y = rng.integers(0, classes, n)
    x = centres[y] + rng.normal(0.0, 1.0, (n, dim))
    cx = rng.normal(0.0, 1.0, (m, dim))
    cx *= 8.0 / np.linalg.norm(cx, axis=1, keepdims=True)     # on a sphere of radius 8
    cy = rng.integers(0, classes, m)
    included = rng.random(m) < 0.5                              # the fair coin of the one-run audit
    return x, y, cx, cy, included


def train(x: np.ndarray, y: np.ndarray, *, classes: int, noise: float, batch: int, epochs: int,
          seed: int) -> tuple[nn.Module, float, int]:
    """DP-SGD with Opacus (Poisson sampling, clipping norm 1). Returns (model, sample rate, steps)."""
    torch.manual_seed(seed)
    data = torch.utils.data.TensorDataset(torch.tensor(x, dtype=torch.float32), torch.tensor(y))
    loader = torch.utils.data.DataLoader(data, batch_size=batch, shuffle=True)
    rate = 1.0 / len(loader)  # what Opacus's Poisson loader samples with (not batch / n)
    model = nn.Sequential(nn.Linear(x.shape[1], 64), nn.ReLU(), nn.Linear(64, classes))
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    loss_fn = nn.CrossEntropyLoss()
    steps = 0
    with warnings.catch_warnings():
        # opacus warns that its RNG is not cryptographically secure (fine for an audit) and torch
        # that the input needs no gradient: neither concerns the audit
        warnings.simplefilter("ignore", UserWarning)
        engine = PrivacyEngine(accountant="rdp")
        model, opt, loader = engine.make_private(module=model, optimizer=opt, data_loader=loader,
                                                 noise_multiplier=noise, max_grad_norm=1.0, poisson_sampling=True)
        for _ in range(epochs):
            for xb, yb in loader:
                steps += 1  # every Poisson draw is a step of the accounting, empty or not
                if len(xb) == 0:  # probability (1 − q)^n: about e^-15 at the smallest size here
                    continue
                opt.zero_grad()
                loss_fn(model(xb), yb).backward()
                opt.step()
    return model, rate, steps


def scores_of(model: nn.Module, cx: np.ndarray, cy: np.ndarray) -> np.ndarray:
    """Log-likelihood of each canary's label under the trained model (higher = looks included)."""
    with torch.no_grad():
        logp = torch.log_softmax(model(torch.tensor(cx, dtype=torch.float32)), dim=1)
    return logp[torch.arange(len(cy)), torch.tensor(cy)].numpy().astype(np.float64)


def main(argv: list[str] | None = None) -> renyi.audit.AuditReport:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--canaries", type=int, default=1000)
    ap.add_argument("--examples", type=int, default=500, help="size of the base training set")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--noise", type=float, default=0.5, help="noise multiplier σ")
    ap.add_argument("--batch", type=int, default=32, help="expected batch size (Poisson)")
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tiny", action="store_true", help="a few seconds: 100 canaries, 1 epoch")
    ap.add_argument("--out", type=Path, default=None, help="directory for scores.csv and run.toml")
    a = ap.parse_args(argv)
    if a.tiny:
        a.canaries, a.examples, a.epochs = 100, 300, 1
    dim, classes = 20, 4
    rng = np.random.default_rng(a.seed)
    x, y, cx, cy, included = build_data(rng, a.examples, a.canaries, dim, classes)
    train_x = np.concatenate([x, cx[included]])
    train_y = np.concatenate([y, cy[included]])
    model, rate, steps = train(train_x, train_y, classes=classes, noise=a.noise, batch=a.batch,
                               epochs=a.epochs, seed=a.seed)
    scores = scores_of(model, cx, cy)
    # the run, as renyi sees it: `steps` Poisson-subsampled Gaussian steps
    event = [(renyi.PoissonSubsampled(renyi.Gaussian(a.noise), rate), steps)]
    # one training run with many canaries: only the one-run audit is valid (design="one_run")
    report = audit(scores, included, delta=a.delta, design="one_run", event=event)
    print(f"{a.canaries} canaries ({int(included.sum())} included) in one training run, {steps} steps at "
          f"rate {rate:.4g}, noise multiplier {a.noise}")
    for r in report.results:
        print(f"  {'audit ' + r.method:<17s}: ε ≥ {r.epsilon:.3f}  ({r.witness})")
    if report.lower is not None:
        print(f"  renyi lower      : ε ≥ {report.lower:.3f}")
    print(f"  renyi certified  : ε ≤ {report.certified:.3f}  ({report.certified_method})")
    if report.contradictions():
        print("  the audit exceeds the certified ε: the training does not match its accounting")
    if a.out is not None:
        a.out.mkdir(parents=True, exist_ok=True)
        with open(a.out / "scores.csv", "w", encoding="utf-8") as fh:
            fh.write("score,included\n")
            fh.writelines(f"{float(s)!r},{int(b)}\n" for s, b in zip(scores, included))
        (a.out / "run.toml").write_text(
            f'title = "Opacus audit run"\n\n[privacy]\ndelta = {a.delta!r}\n\n[[mechanism]]\nname = "dp-sgd"\n'
            f'type = "gaussian"\nsigma = {a.noise!r}\nsensitivity = 1.0\n'
            f'sampling = {{ scheme = "poisson", rate = {rate!r} }}\ncount = {steps}\n', encoding="utf-8")
        print(f"wrote {a.out / 'scores.csv'} and {a.out / 'run.toml'}")
    return report


if __name__ == "__main__":
    main()
