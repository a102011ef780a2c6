"""Figures: ε versus compositions, RDP curves with their witness order, privacy profiles, the
privacy loss random variable with its α-power means, and the report.

Presentation only: every number drawn comes from a library call (guarantees, conversions,
composition theorems); nothing here is a privacy formula. matplotlib is imported lazily and
only through its object API (:class:`matplotlib.figure.Figure`), so no global pyplot state is
touched and the backend is never changed: in a notebook the figures display inline through
the notebook's own backend, and :func:`save_figure` renders files without any display.

Each ``*_figure`` function returns a Figure; :func:`save_figure` writes it (PNG, SVG or PDF by
suffix) at a fixed size of ``FIGSIZE`` inches × ``DPI``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import numpy as np

if TYPE_CHECKING:  # pragma: no cover - matplotlib is imported only when a figure is drawn
    from matplotlib.figure import Figure

_P = ParamSpec("_P")
_R = TypeVar("_R")

__all__ = [
    "DPI",
    "FIGSIZE",
    "WIDE_FIGSIZE",
    "compositions_data",
    "compositions_figure",
    "rdp_figure",
    "profile_figure",
    "figure_for",
    "plrv_figure",
    "report_figure",
    "tradeoff_data",
    "tradeoff_figure",
    "save_figure",
    "epsilon_vs_count",
    "rdp_curve",
    "privacy_profile",
    "privacy_loss",
]

DPI = 150
FIGSIZE = (7.0, 4.5)
WIDE_FIGSIZE = (12.0, 4.5)

# (typed Any: matplotlib types rc_context keys as a Literal of every rc name)
_STYLE: Any = {
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 8.5,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "lines.linewidth": 1.8,
    "legend.frameon": False,
    "svg.fonttype": "none",
    "savefig.facecolor": "white",
}

# Colour-blind-safe palette (Okabe–Ito), fixed per definition so figures agree.
COLOURS = {
    "exact": "#000000",
    "rdp": "#0072B2",
    "rdp_classic": "#56B4E9",
    "rdp_fixed": "#009E73",
    "rdp_fixed2": "#7FC9A8",
    "zcdp": "#E69F00",
    "advanced": "#D55E00",
    "basic": "#CC79A7",
}


def _figure(size: tuple[float, float] = FIGSIZE, ncols: int = 1) -> tuple[Figure, Any]:
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(_STYLE):
        fig = Figure(figsize=size, dpi=DPI, layout="constrained")
        axes = fig.subplots(1, ncols)
    return fig, axes


def _styled(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """Run a drawing function under the house style."""

    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        import matplotlib

        with matplotlib.rc_context(_STYLE):
            return fn(*args, **kwargs)

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


def save_figure(fig: Any, path: str | os.PathLike[str]) -> str:
    """Write ``fig`` to ``path``; the format follows the suffix (.png, .svg, .pdf).

    Raises:
        ValueError: unknown suffix.
        OSError: the path cannot be written.
    """
    p = os.fspath(path)
    suffix = os.path.splitext(p)[1].lower().lstrip(".")
    if suffix not in ("png", "svg", "pdf"):
        raise ValueError(f"plot file must end in .png, .svg or .pdf; got {p!r}")
    import matplotlib

    with matplotlib.rc_context(_STYLE):
        fig.savefig(p, format=suffix, dpi=DPI)
    return p


def _eps_label(delta: float) -> str:
    return f"ε at δ = {delta:g}"


# --------------------------------------------------------------------------------------
# ε versus the number of compositions
# --------------------------------------------------------------------------------------
def compositions_data(sigma: float, *, sensitivity: float = 1.0, delta: float = 1e-5,
                      max_count: int = 10_000, fixed_orders: Sequence[float] = (8.0, 32.0),
                      points: int = 40, progress: Any = None) -> dict[str, Any]:
    """ε after k runs of a Gaussian mechanism under each definition, for k = 1 … ``max_count``.

    Returns a dict with ``counts`` and one array per series (``exact``, ``rdp``, ``rdp_classic``,
    ``zcdp``, ``rdp_fixed_<α>``, ``advanced``, ``basic``), each a valid upper bound on ε.
    """
    from renyi.guarantees import conversions as conv
    from renyi.guarantees.composition import advanced_composition
    from renyi.guarantees import GDP, ZCDP
    from renyi.mechanisms import Gaussian

    g = Gaussian(sigma, sensitivity)
    mu = float(g.guarantee.mu)
    rho = g.guarantee.rho
    counts = np.unique(np.round(np.geomspace(1, max_count, points)).astype(int))
    out: dict[str, Any] = {"counts": counts, "sigma": sigma, "sensitivity": sensitivity, "delta": delta}
    keys = ["exact", "rdp", "rdp_classic", "zcdp", "advanced", "basic"] + [f"rdp_fixed_{a:g}" for a in fixed_orders]
    series: dict[str, list[float]] = {k: [] for k in keys}
    for i, k in enumerate(counts):
        k = int(k)
        if progress is not None:
            progress(f"k = {k}")
        series["exact"].append(GDP(mu).compose(k).epsilon(delta))
        curve = ZCDP(k * rho).to_rdp()
        series["rdp"].append(conv.rdp_to_approx_dp(curve, delta).value)
        series["rdp_classic"].append(conv.rdp_to_approx_dp_mironov(curve, delta).value)
        series["zcdp"].append(conv.zcdp_to_approx_dp_bs21(k * rho, delta).value)
        for a in fixed_orders:
            series[f"rdp_fixed_{a:g}"].append(conv.rdp_point_to_approx_dp(a, float(curve.rdp(a)), delta))
        series["basic"].append(k * g.epsilon(delta / k))
        run = delta / (2 * k)
        series["advanced"].append(float(advanced_composition(g.epsilon(run), run, k, delta / 2).epsilon))
    for key, vals in series.items():
        out[key] = np.asarray(vals, dtype=np.float64)
    return out


@_styled
def compositions_figure(sigma: float, *, sensitivity: float = 1.0, delta: float = 1e-5,
                        max_count: int = 10_000, fixed_orders: Sequence[float] = (8.0, 32.0),
                        progress: Any = None) -> Figure:
    """ε versus the number of compositions k of a Gaussian mechanism, one line per analysis:
    exact (GDP), RDP with the order optimised (CKS20) and the classic conversion (Mir17), RDP
    at fixed orders, zCDP with the classic Bun–Steinke conversion, and plain (ε, δ)-DP with
    advanced and basic composition."""
    d = compositions_data(sigma, sensitivity=sensitivity, delta=delta, max_count=max_count,
                          fixed_orders=fixed_orders, progress=progress)
    fig, (ax, ax2) = _figure(WIDE_FIGSIZE, ncols=2)
    k = d["counts"]
    fixed_colours = [COLOURS["rdp_fixed"], COLOURS["rdp_fixed2"], "#999999"]
    lines = [("basic", COLOURS["basic"], ":", 1.8, "(ε, δ)-DP, basic composition"),
             ("advanced", COLOURS["advanced"], "--", 1.8, "(ε, δ)-DP, advanced composition (DRV10)")]
    for i, a in enumerate(fixed_orders):
        lines.append((f"rdp_fixed_{a:g}", fixed_colours[i % 3], "-.", 1.4, f"RDP at fixed α = {a:g} (CKS20)"))
    # For the Gaussian, BS16's ρ + 2√(ρ log 1/δ) *is* Mir17's conversion at the best order:
    # one line, two names.
    lines += [("rdp_classic", COLOURS["zcdp"], "--", 1.8, "zCDP: ρ + 2√(ρ log 1/δ) (BS16) = RDP, Mir17 conversion"),
              ("rdp", COLOURS["rdp"], "-", 1.8, "RDP / zCDP, α optimised (CKS20)"),
              ("exact", COLOURS["exact"], "-", 2.2, "exact (Gaussian DP)")]
    exact = d["exact"]
    for key, col, ls, lw, label in lines:
        ax.plot(k, d[key], color=col, ls=ls, lw=lw, label=label)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(exact > 0, d[key] / exact, np.nan)
        ax2.plot(k, ratio, color=col, ls=ls, lw=lw, label=label)
    for a_ in (ax, ax2):
        a_.set_xscale("log")
        a_.set_xlabel("number of compositions k")
        a_.set_xlim(k[0], k[-1])
    ax.set_yscale("log")
    ax.set_ylabel(_eps_label(delta))
    sens = "" if sensitivity == 1.0 else f", Δ₂ = {sensitivity:g}"
    ax.set_title(f"Gaussian mechanism (σ = {sigma:g}{sens}): ε after k runs")
    ax.legend(loc="upper left")
    ax2.set_yscale("log")
    ax2.set_ylim(0.95, 20.0)
    ax2.set_yticks([1, 1.25, 1.5, 2, 3, 5, 10, 20])
    ax2.set_yticklabels(["1", "1.25", "1.5", "2", "3", "5", "10", "20"])
    ax2.minorticks_off()
    ax2.set_xscale("log")
    ax2.set_ylabel("ε / exact ε  (1 = exact)")
    ax2.set_title("How much each analysis overstates ε")
    return fig


# --------------------------------------------------------------------------------------
# RDP curve with its witness order
# --------------------------------------------------------------------------------------
def _curve_parts(report: Any) -> tuple[Any, float]:
    from renyi.guarantees import ApproxRDP

    curve = report.curve
    d = report.delta
    if isinstance(curve, ApproxRDP):
        da = float(curve.delta)
        return curve.curve, (d - da) / (1.0 - da)
    return curve, d


def _orders_for(witness: float | None) -> np.ndarray:
    hi = 256.0
    if witness is not None and math.isfinite(witness):
        hi = max(hi, 8.0 * witness)
    return 1.0 + np.geomspace(1e-2, hi - 1.0, 300)


def _draw_rdp(ax: Any, report: Any, *, per_mechanism: bool = True, compact: bool = False) -> None:
    from renyi.guarantees import conversions as conv
    from renyi.guarantees.composition import as_guarantee
    from renyi.report import _as_curve, _plain_curve

    curve, dconv = _curve_parts(report)
    wit = report.rdp_witness
    orders = _orders_for(wit)
    eps = np.asarray(curve.rdp(orders), dtype=np.float64)
    ax.plot(orders, eps, color=COLOURS["rdp"], label="RDP curve ε(α) of the pipeline")
    if dconv > 0:
        bound = np.array([conv.rdp_point_to_approx_dp(float(a), float(e), dconv) if math.isfinite(e) else np.inf
                          for a, e in zip(orders, eps)])
        ax.plot(orders, bound, color=COLOURS["advanced"], ls="--",
                label=f"ε at δ = {report.delta:g} from order α (CKS20 Prop. 12)")
    if per_mechanism and 1 < len(report.shares) <= 6 and not compact:
        styles = [":", (0, (3, 1, 1, 1)), (0, (5, 2)), (0, (1, 2)), "-.", (0, (2, 2))]
        for i, s in enumerate(report.shares):
            mech = _entry_mechanism(report, s.name)
            if mech is None:
                continue
            cg = _plain_curve(_as_curve(as_guarantee(mech)))
            part = s.count * np.asarray(cg.rdp(orders), dtype=np.float64)
            ax.plot(orders, part, color="#777777", lw=1.1, ls=styles[i % len(styles)],
                    label=f"{s.name} ({s.count:,}×)")
    rdp_route = report.route_by_key("rdp")
    if wit is not None and math.isfinite(wit):
        ax.axvline(wit, color="#444444", lw=0.9, ls=":")
        from renyi.core.formatting import fmt_up

        # The witness is named in the legend (placed clear of the lines), never on the curve.
        ax.plot([wit], [rdp_route.epsilon], marker="o", color=COLOURS["advanced"], ms=6, zorder=5, ls="none",
                label=f"witness α* = {wit:.3g}: ε = {fmt_up(rdp_route.epsilon)}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("Rényi order α")
    ax.set_ylabel("ε(α)  (RDP)  /  ε at δ")
    ticks = [t for t in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 1e4, 1e5, 1e6)
             if orders[0] <= t <= orders[-1]]
    ax.set_xticks(ticks)
    ax.set_xticklabels([f"{t:g}" for t in ticks])
    ax.minorticks_off()
    finite = eps[np.isfinite(eps) & (eps > 0)]
    if finite.size:
        ax.set_ylim(max(finite.min() / 2.0, 1e-6), max(finite.max() * 2.0, rdp_route.epsilon * 4.0))
    ax.set_xlim(orders[0], orders[-1])
    ax.legend(loc="upper left" if compact else "best")


def _entry_mechanism(report: Any, name: str) -> Any:
    entries = getattr(report, "entries", None)
    if entries is None:
        return None
    for e in entries:
        if e.name == name:
            return e.mechanism
    return None


@_styled
def rdp_figure(report: Any) -> Figure:
    """The pipeline's RDP curve ε(α), the ε each order gives at the report's δ, each
    mechanism's contribution, and the witness order α* that achieves the best ε."""
    fig, ax = _figure()
    _draw_rdp(ax, report)
    ax.set_title(f"RDP curve of {_name(report)}")
    return fig


def _name(report: Any) -> str:
    result: str = report.title or os.path.basename(report.source)
    return result


# --------------------------------------------------------------------------------------
# Privacy profile δ(ε)
# --------------------------------------------------------------------------------------
def _profile_series(report: Any, points: int, progress: Any) -> dict[str, Any]:
    from renyi.report import _zcdp_of  # the same routes the report used
    import renyi
    from renyi.guarantees.composition import as_guarantee

    eps_max = max(2.0 * report.epsilon, 1.0) if math.isfinite(report.epsilon) else 10.0
    grid = np.linspace(0.0, eps_max, points)
    out: dict[str, Any] = {"epsilon": grid}
    series = {"best": report.total, "rdp": report.curve}
    entries = getattr(report, "entries", None)
    if report.route_by_key("zcdp").applicable and entries is not None:
        series["zcdp"] = renyi.compose(*[(_zcdp_of(as_guarantee(e.mechanism)), e.count) for e in entries])
    for key, g in series.items():
        vals = []
        for e in grid:
            if progress is not None:
                progress(f"{key} at ε = {e:.2f}")
            vals.append(g.delta(float(e)))
        out[key] = np.asarray(vals)
    return out


@_styled
def profile_figure(report: Any, *, points: int = 60, progress: Any = None) -> Figure:
    """The privacy profile δ(ε): the smallest δ for each ε, through the composed guarantee
    (exact for Gaussian pipelines), the RDP curve and zCDP, with the report's (ε, δ) marked."""
    d = _profile_series(report, points, progress)
    fig, ax = _figure()
    x = d["epsilon"]
    labels = {"best": f"composed guarantee ({report.total.definition})", "rdp": "RDP curve (CKS20 Prop. 12)",
              "zcdp": "zCDP (best conversion)"}
    styles = {"best": ("-", COLOURS["exact"], 2.2), "rdp": ("--", COLOURS["rdp"], 1.8),
              "zcdp": (":", COLOURS["zcdp"], 2.2)}
    for key in ("best", "rdp", "zcdp"):
        if key in d:
            ls, col, lw = styles[key]
            y = np.where(d[key] > 0, d[key], np.nan)
            ax.plot(x, y, ls=ls, color=col, lw=lw, label=labels[key])
    ax.plot([report.epsilon], [report.delta], marker="o", color=COLOURS["advanced"], ms=6, zorder=5,
            label=f"report: ε = {_up(report.epsilon)} at δ = {report.delta:g}")
    ax.set_yscale("log")
    ax.set_xlabel("ε")
    ax.set_ylabel("δ(ε)")
    finite = np.concatenate([d[k][(d[k] > 0)] for k in ("best", "rdp") if k in d])
    lo = max(min(finite.min() if finite.size else 1e-12, report.delta / 1e4), 1e-30)
    ax.set_ylim(lo, 1.5)
    ax.set_xlim(0, x[-1])
    ax.set_title(f"Privacy profile of {_name(report)}")
    ax.legend(loc="upper right")
    return fig


def _up(x: float) -> str:
    from renyi.core.formatting import fmt_up

    return fmt_up(x)


# --------------------------------------------------------------------------------------
# The privacy loss random variable and its α-power means
# --------------------------------------------------------------------------------------
@_styled
def plrv_figure(mechanism: Any, *, orders: Sequence[float] = (1.0, 2.0, 3.0, 8.0, math.inf), label: str = "",
                ax: Any = None) -> Figure:
    """The distribution of the privacy loss Z of ``mechanism`` with the log of the α-power
    means of e^Z marked: α → 1 the mean (KL), α = 2 the log of the arithmetic mean of e^Z,
    α = ∞ the worst case. Higher orders weigh the bad tail of Z more."""
    from renyi.divergences import plrv as plrv_mod

    loss = mechanism.privacy_loss()
    with np.errstate(divide="ignore"):
        # log of the α-power mean of e^Z is D_α (plrv.power_means returns the mean itself)
        means = np.log(np.asarray(plrv_mod.power_means(loss, np.asarray(orders, dtype=np.float64)),
                                  dtype=np.float64))
    fig, ax = _target(ax)
    values = getattr(loss, "values", None)
    if values is not None and np.size(values) <= 200:
        z = np.asarray(values, dtype=np.float64)
        pm = np.asarray(loss.probs, dtype=np.float64)
        fin = np.isfinite(z)
        ax.vlines(z[fin], 0, pm[fin], color=COLOURS["rdp"], lw=4, label="P[Z = z]")
        ax.set_ylabel("probability")
    else:
        # Samples rather than a density: Laplace-type losses have atoms (at ±ε) that a
        # density cannot show; a histogram of probabilities per bin shows both.
        zs = np.asarray(loss.sample(200_000, np.random.default_rng(0)), dtype=np.float64)
        zs = zs[np.isfinite(zs)]
        lo_q, hi_q = np.quantile(zs, [0.0005, 0.9995])
        pad = 0.05 * (hi_q - lo_q + 1e-12)
        bins = np.linspace(lo_q - pad, hi_q + pad, 90)
        w = np.full(zs.shape, 1.0 / zs.size)
        ax.hist(zs, bins=bins, weights=w, color=COLOURS["rdp"], alpha=0.55, label="P[Z in bin] (200 000 draws)")
        ax.set_ylabel(f"probability per bin (width {bins[1] - bins[0]:.2g})")
    ymax = ax.get_ylim()[1]
    names = {1.0: "α → 1: E[Z] (KL)", 2.0: "α = 2: log E[e^Z]", 3.0: "α = 3: ½·log E[e^(2Z)]",
             math.inf: "α = ∞: max Z"}
    cols = ["#009E73", "#E69F00", "#D55E00", "#CC79A7", "#000000", "#56B4E9"]
    xmin, xmax = ax.get_xlim()
    for i, (a, m) in enumerate(zip(orders, means)):
        text = names.get(float(a), f"α = {a:g}: D_α")
        if not math.isfinite(m):
            ax.plot([], [], color=cols[i % len(cols)], lw=1.5, ls="--", label=f"{text} = ∞ (off the chart)")
            continue
        ax.axvline(m, color=cols[i % len(cols)], lw=1.5, ls="--", label=f"{text} = {m:.3g}")
        xmax = max(xmax, m + 0.05 * (xmax - xmin))
    ax.set_xlim(xmin, xmax)
    ax.set_ylim(0, ymax * 1.35)  # room for the legend
    ax.set_xlabel("privacy loss z = log(p(o)/p′(o)),  o ~ M(x)")
    ax.set_title(f"Privacy loss Z of {label or repr(mechanism)}\n"
                 "with the log α-power means of e^Z, log M_α = D_α")
    ax.legend(loc="upper left")
    return fig


# --------------------------------------------------------------------------------------
# The report figure
# --------------------------------------------------------------------------------------
@_styled
def report_figure(report: Any) -> Figure:
    """Left: ε of the pipeline through each definition (the best highlighted). Right: the RDP
    curve with its witness order."""
    fig, (ax1, ax2) = _figure(WIDE_FIGSIZE, ncols=2)
    routes = [r for r in report.routes if r.applicable]
    names = [r.title for r in routes][::-1]
    vals = [r.epsilon for r in routes][::-1]
    colours = [COLOURS.get(r.key, "#777777") for r in routes][::-1]
    bars = ax1.barh(names, vals, color=colours, alpha=0.85)
    for b, r in zip(bars, routes[::-1]):
        if r.key == report.route:
            b.set_edgecolor("black")
            b.set_linewidth(1.5)
        ax1.annotate(_up(r.epsilon), xy=(b.get_width(), b.get_y() + b.get_height() / 2), xytext=(4, 0),
                     textcoords="offset points", va="center", fontsize=8.5)
    # A linear axis from 0: bar lengths are then proportional to ε (on a log axis they mean
    # nothing). Room on the right for the value labels.
    ax1.set_xlim(0.0, max(vals) * 1.18)
    ax1.set_xlabel(_eps_label(report.delta))
    ax1.grid(axis="y", visible=False)
    ax1.set_title(f"{_name(report)}: ε ≤ {_up(report.epsilon)} at δ = {report.delta:g}")
    _draw_rdp(ax2, report, per_mechanism=True)
    ax2.set_title("RDP curve and witness order")
    return fig


# --------------------------------------------------------------------------------------
# The hypothesis-testing view: the trade-off curve
# --------------------------------------------------------------------------------------
def tradeoff_data(composition: Any, *, points: int = 60, log_fpr: bool = False) -> dict[str, Any]:
    """The series of :func:`tradeoff_figure`: FPR grid, the PLD's certified TPR bracket, the
    μ-GDP statement's curve, and the TPR implied by the RDP route.

    Args:
        composition: a mechanism, guarantee, ``(item, count)`` pair or list (as for
            :func:`renyi.routes.best_epsilon`); the PLD curves need mechanisms it knows.
        points: number of false-positive rates.
        log_fpr: FPRs spaced logarithmically from 1e-5 (else linearly from 0).
    """
    from renyi.accounting import routes
    from renyi.core.errors import ConversionError

    if log_fpr:
        fpr = np.geomspace(1e-5, 1.0, points)
    else:
        fpr = np.linspace(0.0, 1.0, points)
    it = routes.items(composition, offer_pld=True)
    out: dict[str, Any] = {"fpr": fpr}
    pld = routes.pld_available()
    if pld is not None:
        try:
            t = pld.tradeoff(list(it.items), fpr)
            out["pld_upper"], out["pld_lower"] = t.upper, t.lower
            g = pld.gdp_mu(list(it.items))
            if math.isfinite(g.mu):
                out["gdp"] = g
                out["gdp_tpr"] = g.tpr(fpr)
        except ConversionError as exc:
            out["pld_note"] = str(exc)
    try:
        out["rdp"] = np.array([c.value for c in routes.tpr_bounds(it, tuple(float(a) for a in fpr), "rdp")])
    except ConversionError:
        pass
    return out


@_styled
def tradeoff_figure(composition: Any, *, points: int = 60, log_fpr: bool = True, title: str = "",
                    ax: Any = None) -> Figure:
    """The attacker's true-positive rate against the false-positive rate: the PLD's certified
    upper bound (with its lower end), the tightest μ-GDP curve that holds, the RDP-implied
    bound for comparison and the random-guess diagonal. Lower curves mean more privacy.

    The axes are logarithmic by default (``log_fpr=False``: linear): the low false-positive
    rates where a membership attack matters (and which the report quotes) are a sliver of a
    linear axis. The false-positive rate is not called α here: α is the Rényi order."""
    d = tradeoff_data(composition, points=points, log_fpr=log_fpr)
    fig, ax = _target(ax)
    x = d["fpr"]
    ax.plot(x, x, color="#999999", lw=1.0, ls=":", label="random guess (TPR = FPR)")
    if "rdp" in d:
        ax.plot(x, d["rdp"], color=COLOURS["rdp"], ls="--", label="RDP route: min over ε of e^ε·FPR + δ(ε)")
    if "gdp" in d:
        g = d["gdp"]
        extra = f" + δ₀ (δ₀ = {g.delta0:g})" if g.delta0 > 0 else ""
        ax.plot(x, d["gdp_tpr"], color=COLOURS["zcdp"], ls="-.", lw=1.6,
                label=f"μ-GDP, μ = {_up(g.mu)}: Φ(Φ⁻¹(FPR) + μ){extra}")
    if "pld_upper" in d:
        ax.plot(x, d["pld_upper"], color=COLOURS["exact"], lw=2.2, label="PLD: certified upper bound")
        if np.any(d["pld_upper"] - d["pld_lower"] > 1e-2 * d["pld_upper"] + 1e-6):
            ax.fill_between(x, d["pld_lower"], d["pld_upper"], color=COLOURS["exact"], alpha=0.15,
                            label="PLD bracket [lower, upper]")
    if log_fpr:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(x[0], 1.0)
        ax.set_ylim(x[0], 1.05)
    else:
        ax.set_xlim(0.0, 1.0)
        ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("false-positive rate (FPR)")
    ax.set_ylabel("true-positive rate (upper bound)")
    ax.set_title(title or "Membership test trade-off")
    ax.legend(loc="lower right")
    return fig


def _tradeoff_report(report: Any, *, points: int = 60, log_fpr: bool = True) -> Figure:
    return tradeoff_figure(report.total, points=points, log_fpr=log_fpr,
                           title=f"Membership test trade-off of {_name(report)}")


def figure_for(kind: str, **kwargs: Any) -> Figure:
    """Dispatch used by the CLI: ``kind`` in report | rdp | profile | plrv | compositions |
    tradeoff."""
    figures: dict[str, Callable[..., Figure]] = {
        "report": report_figure, "rdp": rdp_figure, "profile": profile_figure, "plrv": plrv_figure,
        "compositions": compositions_figure, "tradeoff": _tradeoff_report,
    }
    return figures[kind](**kwargs)


# --------------------------------------------------------------------------------------
# Helpers for notebooks: any guarantee or mechanism
# --------------------------------------------------------------------------------------
def _target(ax: Any) -> tuple[Figure, Any]:
    """A new house-style figure, or the figure of the axes the caller passed."""
    if ax is None:
        return _figure()
    return ax.figure, ax


def _unit(item: Any) -> tuple[Any, int]:
    """(guarantee or mechanism, count) for an item or an ``(item, count)`` pair."""
    if isinstance(item, tuple) and len(item) == 2 and not isinstance(item[0], (int, float)):
        return item[0], int(item[1])
    return item, 1


def _item_label(item: Any) -> str:
    obj, count = _unit(item)
    text = repr(obj)
    text = text if len(text) <= 60 else text[:59] + "…"
    return text if count == 1 else f"{count} × {text}"


def _labels(items: Sequence[Any], labels: Sequence[str] | None) -> list[str]:
    if labels is None:
        return [_item_label(it) for it in items]
    if len(labels) != len(items):
        from renyi.core.errors import DomainError

        raise DomainError(f"labels must give one label per item ({len(items)}); got {len(labels)}",
                          name="labels", value=labels)
    return list(labels)


def _check_items(items: Sequence[Any]) -> None:
    if not items:
        from renyi.core.errors import DomainError

        raise DomainError("give at least one guarantee or mechanism to plot; got none", name="items")


_CYCLE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")


@_styled
def epsilon_vs_count(*items: Any, delta: float = 1e-5, max_count: int = 1000, points: int = 25,
                     labels: Sequence[str] | None = None, ax: Any = None) -> Figure:
    """ε at ``delta`` after k runs of each item, for k = 1 … ``max_count`` (log-log axes).

    Args:
        *items: guarantees, mechanisms or ``(item, count)`` pairs (one run = ``count`` runs of
            the item), anything :func:`renyi.compose` accepts.
        delta: δ ∈ (0, 1) at which ε is computed.
        max_count: the largest number of runs k ≥ 1.
        points: how many values of k (geometrically spaced) per line.
        labels: one legend label per item (default: the item's repr).
        ax: draw into these matplotlib axes instead of a new figure.

    Returns:
        The figure drawn on. Every plotted ε is the library's valid upper bound
        (``renyi.compose((item, k)).epsilon(delta)``).
    """
    from renyi.core._validation import PROBABILITY_OPEN, check_int
    from renyi.guarantees.composition import compose

    _check_items(items)
    delta = PROBABILITY_OPEN.check("delta", delta)
    max_count = check_int("max_count", max_count)
    names = _labels(items, labels)
    counts = np.unique(np.round(np.geomspace(1, max_count, max(2, check_int("points", points)))).astype(int))
    fig, ax = _target(ax)
    for i, (item, name) in enumerate(zip(items, names)):
        obj, c = _unit(item)
        eps = [compose((obj, c * int(k))).epsilon(delta) for k in counts]
        ax.plot(counts, eps, color=_CYCLE[i % len(_CYCLE)], label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("number of runs k")
    ax.set_ylabel(_eps_label(delta))
    ax.set_title("ε after k runs")
    ax.legend(loc="upper left")
    return fig


@_styled
def rdp_curve(*items: Any, orders: Sequence[float] | None = None, labels: Sequence[str] | None = None,
              ax: Any = None) -> Figure:
    """The RDP curve ε(α) of each item against the order α (log-log axes).

    Args:
        *items: guarantees, mechanisms or ``(item, count)`` pairs.
        orders: the orders α > 1 to evaluate (default: 300 orders from 1.01 to 256).
        labels: one legend label per item (default: the item's repr).
        ax: draw into these matplotlib axes instead of a new figure.

    Returns:
        The figure drawn on; orders where a curve is infinite are left out of its line.
    """
    from renyi.core._validation import ORDER
    from renyi.guarantees.composition import compose

    _check_items(items)
    names = _labels(items, labels)
    a = 1.0 + np.geomspace(1e-2, 255.0, 300) if orders is None else ORDER.check_array("orders", orders)
    fig, ax = _target(ax)
    for i, (item, name) in enumerate(zip(items, names)):
        eps = np.asarray(compose(_unit(item)).rdp(a), dtype=np.float64)
        ok = np.isfinite(eps) & (eps > 0)
        ax.plot(a[ok], eps[ok], color=_CYCLE[i % len(_CYCLE)], label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("Rényi order α")
    ax.set_ylabel("ε(α)")
    ax.set_title("RDP curves")
    ax.legend(loc="upper left")
    return fig


@_styled
def privacy_profile(*items: Any, epsilons: Sequence[float] | None = None, labels: Sequence[str] | None = None,
                    ax: Any = None) -> Figure:
    """The privacy profile δ(ε) of each item: the smallest valid δ at each ε (log δ axis).

    Args:
        *items: guarantees, mechanisms or ``(item, count)`` pairs.
        epsilons: the values ε ≥ 0 (default: 60 points from 0 to 2 × the largest ε at δ = 1e-6).
        labels: one legend label per item (default: the item's repr).
        ax: draw into these matplotlib axes instead of a new figure.

    Returns:
        The figure drawn on. Each δ is the library's valid upper bound (``item.delta(ε)``).
    """
    from renyi.core._validation import NONNEGATIVE
    from renyi.guarantees.composition import compose

    _check_items(items)
    names = _labels(items, labels)
    gs = [compose(_unit(item)) for item in items]
    if epsilons is None:
        top = max((g.epsilon(1e-6) for g in gs), default=1.0)
        grid = np.linspace(0.0, 2.0 * top if math.isfinite(top) and top > 0 else 10.0, 60)
    else:
        grid = np.asarray([NONNEGATIVE.check("epsilons", float(e)) for e in epsilons], dtype=np.float64)
    fig, ax = _target(ax)
    for i, (g, name) in enumerate(zip(gs, names)):
        d = np.asarray([g.delta(float(e)) for e in grid], dtype=np.float64)
        ax.plot(grid, np.where(d > 0, d, np.nan), color=_CYCLE[i % len(_CYCLE)], label=name)
    ax.set_yscale("log")
    ax.set_xlabel("ε")
    ax.set_ylabel("δ(ε)")
    ax.set_title("Privacy profiles")
    ax.legend(loc="upper right")
    return fig


def privacy_loss(mechanism: Any, *, orders: Sequence[float] = (1.0, 2.0, 3.0, 8.0, math.inf), label: str = "",
                 ax: Any = None) -> Figure:
    """The privacy loss random variable of ``mechanism`` with its log α-power means marked
    (the same figure as ``renyi plot plrv``; see :func:`plrv_figure`).

    Args:
        mechanism: a mechanism with a known privacy-loss law (``mechanism.privacy_loss()``).
        orders: the orders α whose power means are marked.
        label: the name used in the title (default: the mechanism's repr).
        ax: draw into these matplotlib axes instead of a new figure.
    """
    return plrv_figure(mechanism, orders=orders, label=label, ax=ax)
