"""Trade-off curves and μ-GDP from the PLD, and the PLD engine against independent ground truth.

Ground truth here shares no code with renyi: the Gaussian trade-off Φ(Φ⁻¹(α) + μ) (scipy),
k-fold binary and k-ary randomized response as exact binomial / multinomial sums (mpmath), and
k-fold Laplace as an exact mixture of piecewise polynomial–exponential densities integrated
by mpmath at 30 digits.
"""

from __future__ import annotations

import math
import warnings

import mpmath as mp
import numpy as np
import pytest

import renyi
from scipy import special

from renyi import routes
from renyi.definitions import ApproxDP, PureDP
from renyi.errors import ConversionError, DomainError, RenyiNumericalWarning
from renyi.mechanisms import Gaussian, Laplace, RandomizedResponse
from renyi.pld import GDPBound, delta_bounds, epsilon_bounds, gdp_mu, tradeoff
from renyi.pld.curves import gdp_delta, gdp_tpr
from renyi.subsampling import PoissonSubsampled

FPRS = [1e-4, 1e-3, 1e-2, 0.05, 0.1, 0.3, 0.7, 0.99]


# ----------------------------------------------------------------------------------------------
# ground truth
# ----------------------------------------------------------------------------------------------
def _gaussian_tpr(mu: float, a: np.ndarray) -> np.ndarray:
    return special.ndtr(special.ndtri(a) + mu)


def _tpr_from_atoms(z: list[mp.mpf], p: list[mp.mpf], alpha: float) -> mp.mpf:
    """Exact TPR at α of a finite pair given the law (z_j, p_j) of its loss under P.

    The profile is piecewise linear in e^ε with kinks at the z_j, so inf_ε e^ε α + δ(ε) is a
    minimum over the z_j (or 1, the limit ε → −∞).
    """
    a = mp.mpf(alpha)
    best = mp.mpf(1)
    for e in z:
        d = mp.fsum(pj * (1 - mp.e ** (e - zj)) for zj, pj in zip(z, p) if zj > e)
        best = min(best, mp.e**e * a + d)
    return best


def _rr_law(eps0: float, k: int, n: int) -> tuple[list[mp.mpf], list[mp.mpf]]:
    """Loss law of n-fold k-ary randomized response: outputs 'true', 'neighbour's', other."""
    e = mp.e ** mp.mpf(eps0)
    norm = e + k - 1
    pt, pn, po = e / norm, 1 / norm, (k - 2) / norm
    law: dict[int, mp.mpf] = {}
    for i in range(n + 1):
        for j in range(n - i + 1):
            m = n - i - j
            if m and k == 2:
                continue
            w = mp.factorial(n) / (mp.factorial(i) * mp.factorial(j) * mp.factorial(m)) * pt**i * pn**j * po**m
            law[i - j] = law.get(i - j, mp.mpf(0)) + w
    zs = sorted(law)
    return [mp.mpf(eps0) * s for s in zs], [law[s] for s in zs]


def _rr_delta(eps0: float, k: int, n: int, eps: float) -> float:
    z, p = _rr_law(eps0, k, n)
    return float(mp.fsum(pj * (1 - mp.e ** (mp.mpf(eps) - zj)) for zj, pj in zip(z, p) if zj > eps))


def _laplace_delta(t: float, k: int, eps: float) -> float:
    """Exact δ(ε) of k-fold Laplace with Δ/b = t, with mpmath.

    One run: P = Lap(0, 1), Q = Lap(t, 1), loss Z = |y − t| − |y|: an atom at t (mass 1/2), an
    atom at −t (mass e^{−t}/2) and the density e^{(z−t)/2}/4 on (−t, t). In a sum of k runs
    with a runs at +t, b at −t and c = k − a − b continuous, the continuous part has density
    C^c e^{s/2} h_c(s), C = e^{−t/2}/4 and h_c the c-fold convolution of 1(−t, t) (a
    piecewise polynomial; inclusion–exclusion). δ(ε) = E[(1 − e^{ε − S})₊] is a finite sum of
    one-dimensional integrals of smooth pieces, integrated between their breakpoints.
    """
    with mp.workdps(30):
        t_, eps_ = mp.mpf(t), mp.mpf(eps)
        c0 = mp.e ** (-t_ / 2) / 4
        total = mp.mpf(0)
        for a in range(k + 1):
            for b in range(k - a + 1):
                c = k - a - b
                w = mp.factorial(k) / (mp.factorial(a) * mp.factorial(b) * mp.factorial(c)) \
                    * mp.mpf(0.5) ** a * (mp.e ** (-t_) / 2) ** b
                shift = (a - b) * t_
                if c == 0:
                    if shift > eps_:
                        total += w * (1 - mp.e ** (eps_ - shift))
                    continue

                def h(s: mp.mpf, c: int = c) -> mp.mpf:
                    # (x)₊^{c−1}, with (x)₊^0 the indicator of x > 0
                    return mp.fsum((-1) ** j * mp.binomial(c, j) * (s + c * t_ - 2 * j * t_) ** (c - 1)
                                   for j in range(c + 1) if s + c * t_ - 2 * j * t_ > 0) / mp.factorial(c - 1)

                lo_s = max(-c * t_, eps_ - shift)
                hi_s = c * t_
                if lo_s >= hi_s:
                    continue
                knots = sorted({lo_s, hi_s} | {-c * t_ + 2 * j * t_ for j in range(c + 1)
                                                 if lo_s < -c * t_ + 2 * j * t_ < hi_s})

                def f(s: mp.mpf, c: int = c, shift: mp.mpf = shift, h=h) -> mp.mpf:  # noqa: ANN001
                    return c0**c * mp.e ** (s / 2) * h(s) * (1 - mp.e ** (eps_ - shift - s))

                total += w * mp.quad(f, knots)
        return float(total)


# ----------------------------------------------------------------------------------------------
# trade-off curves
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sigma,k", [(1.0, 1), (1.0, 4), (3.0, 50)])
def test_gaussian_tradeoff_brackets_the_exact_curve(sigma: float, k: int) -> None:
    """k-fold Gaussian: lower ≤ Φ(Φ⁻¹(α) + μ) ≤ upper, and upper within 1e-4 of it."""
    mu = math.sqrt(k) / sigma
    a = np.array(FPRS)
    t = tradeoff([(Gaussian(sigma), k)], a)
    exact = _gaussian_tpr(mu, a)
    assert np.all(t.lower <= exact * (1 + 1e-12))
    assert np.all(exact <= t.upper)
    assert np.all(t.upper <= exact * (1 + 1e-4) + 1e-9)


@pytest.mark.parametrize("eps0,k,n", [(1.0, 2, 5), (0.5, 2, 30), (0.7, 4, 8)])
def test_randomized_response_tradeoff_brackets_the_exact_curve(eps0: float, k: int, n: int) -> None:
    """n-fold (k-ary) randomized response: the exact curve from the multinomial law."""
    z, p = _rr_law(eps0, k, n)
    a = np.array(FPRS)
    t = tradeoff([(RandomizedResponse(eps0, k=k), n)], a)
    for i, alpha in enumerate(FPRS):
        exact = float(_tpr_from_atoms(z, p, alpha))
        assert t.lower[i] <= exact * (1 + 1e-12) <= t.upper[i] * (1 + 2e-12)
        assert t.upper[i] <= exact * (1 + 1e-5) + 1e-12


def test_dpsgd_tradeoff_is_a_narrow_bracket_below_the_rdp_curve() -> None:
    """DP-SGD: a bracket narrower than 0.5 %, below the RDP-implied TPR, above FPR."""
    m = PoissonSubsampled(Gaussian(1.1), 0.025)
    t = tradeoff([(m, 80)], [1e-3, 1e-2, 0.1])
    assert np.all(t.lower <= t.upper) and np.all(t.upper <= t.lower * 1.005)
    rdp = routes.tpr_bounds([(m, 80)], (1e-3, 1e-2, 0.1), "rdp")
    assert np.all(t.upper < [c.value for c in rdp])
    assert np.all(t.lower >= [1e-3, 1e-2, 0.1])


def test_tradeoff_is_monotone_and_ends_at_one() -> None:
    """Shape: increasing in α, TPR(0) ≥ 0, TPR(1) = 1; bad α is a clear error."""
    a = np.linspace(0.0, 1.0, 41)
    t = tradeoff([(Laplace(2.0), 3), (Gaussian(4.0), 2)], a)
    assert t.upper[-1] == 1.0 and t.upper[0] >= 0.0
    assert np.all(np.diff(t.upper) >= -1e-12)
    assert t.upper.shape == a.shape
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(DomainError, match="fpr"):
            tradeoff([(Gaussian(1.0), 1)], [bad])
    with pytest.raises(ConversionError):
        tradeoff([(object(), 1)], [0.1])


# ----------------------------------------------------------------------------------------------
# μ-GDP
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sigmas", [(1.0, 1.0, 1.0, 1.0), (2.0, 0.5, 3.0)])
def test_gdp_mu_of_gaussians_is_exact_and_never_below(sigmas: tuple[float, ...]) -> None:
    """Gaussian compositions: the exact μ = √Σ1/σ²; the PLD check alone is ≥ it and within 1e-6."""
    exact = math.sqrt(sum(1 / s**2 for s in sigmas))
    items = [(Gaussian(s), 1) for s in sigmas]
    b = gdp_mu(items)
    assert b.method == "gdp" and b.delta0 == 0.0 and b.mu == pytest.approx(exact, rel=1e-15)
    p = gdp_mu(items, method="pld", tol=1e-5)
    assert p.method == "pld"
    assert exact <= p.mu <= exact * (1 + 1e-6)
    assert p.lower is not None and p.lower <= exact


def test_gdp_statement_holds_against_the_exact_profile() -> None:
    """Randomized response (exact profile known): δ(ε) ≤ δ_μ(ε) + δ₀ on a dense ε grid, and a
    μ 1e-3 below the certified one (or the lower end) fails somewhere."""
    b = gdp_mu([(RandomizedResponse(1.0), 5)])
    assert b.method == "pld" and b.lower is not None and b.lower <= b.mu <= b.lower * (1 + 1e-4)
    eps = np.linspace(0.0, 5.0, 2001)
    exact = np.array([_rr_delta(1.0, 2, 5, e) for e in eps])
    assert np.all(exact <= gdp_delta(b.mu, eps) + b.delta0)
    assert np.any(exact > gdp_delta(b.lower * (1 - 1e-3), eps) + b.delta0)


def test_gdp_of_dpsgd_is_far_below_the_composition_bound() -> None:
    """DP-SGD: the certified μ (down to δ₀) is far below √T/σ, above the CLT value."""
    q, sigma, steps = 0.01, 1.0, 1000
    b = gdp_mu([(PoissonSubsampled(Gaussian(sigma), q), steps)])
    clt = q * math.sqrt(steps * math.expm1(1 / sigma**2))
    assert b.method == "pld" and b.delta0 == 1e-12
    assert clt < b.lower <= b.mu < 1.01 * b.lower < math.sqrt(steps) / sigma
    # TPR ≤ Φ(Φ⁻¹(α) + μ) + δ₀ dominates the PLD curve itself
    t = tradeoff([(PoissonSubsampled(Gaussian(sigma), q), steps)], FPRS)
    assert np.all(t.lower <= b.tpr(FPRS) * (1 + 1e-9))
    # δ₀ = 0: only the composition of the Gaussians' own guarantee holds (√T/σ)
    z = gdp_mu([(PoissonSubsampled(Gaussian(sigma), q), steps)], delta0=0.0)
    assert z.method == "gdp" and z.mu == pytest.approx(math.sqrt(steps) / sigma)


def test_gdp_without_a_finite_mu_and_bad_input() -> None:
    """(ε, δ)-DP with δ above δ₀ has no μ; bad δ₀ / method are clear errors."""
    b = gdp_mu([(ApproxDP(1.0, 1e-6), 3)])
    assert math.isinf(b.mu)
    assert math.isfinite(gdp_mu([(PureDP(1.0), 3)]).mu)
    for bad in (-1e-3, 1.0, float("nan")):
        with pytest.raises(DomainError, match="delta0"):
            gdp_mu([(Gaussian(1.0), 1)], delta0=bad)
    with pytest.raises(DomainError, match="method"):
        gdp_mu([(Gaussian(1.0), 1)], method="rdp")
    with pytest.raises(ConversionError):
        gdp_mu([(object(), 1)])
    assert isinstance(b, GDPBound)


def test_gdp_helpers_match_closed_forms() -> None:
    """δ_μ and 1 − G_μ against scipy closed forms; μ = 0 and μ = ∞ ends."""
    e = np.array([0.0, 0.5, 3.0])
    want = special.ndtr(-e / 2 + 1) - np.exp(e) * special.ndtr(-e / 2 - 1)
    assert np.allclose(gdp_delta(2.0, e), want, rtol=1e-12)
    assert np.allclose(gdp_tpr(0.0, [0.1, 0.5]), [0.1, 0.5])
    assert np.all(gdp_tpr(math.inf, [0.1, 0.5]) == 1.0)


# ----------------------------------------------------------------------------------------------
# the engine against ground truth (issue #17, "What it must show")
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("k", [2, 3, 5])
def test_k_fold_laplace_brackets_the_mpmath_profile(k: int) -> None:
    """k-fold Laplace (Δ/b = 0.5): lower ≤ exact δ(ε) ≤ upper, exact from mpmath."""
    t = 0.5
    for eps in ((0.1, 0.8, 1.7) if k < 5 else (0.3, 1.7)):
        exact = _laplace_delta(t, k, eps)
        lo, hi = delta_bounds([(Laplace(1.0 / t), k)], eps)
        assert lo <= exact * (1 + 1e-12) and exact <= hi, (eps, lo, exact, hi)
        assert hi <= exact * 1.01 + 1e-12


def test_laplace_ground_truth_is_itself_right() -> None:
    """The mpmath k-fold Laplace at k = 1 is the closed form (the oracle can fail)."""
    t = 0.8
    for eps in (0.0, 0.3, 0.7):
        closed = 1 - math.exp((eps - t) / 2)  # δ of one Laplace run, 0 ≤ ε ≤ t
        assert _laplace_delta(t, 1, eps) == pytest.approx(closed, rel=1e-12)


@pytest.mark.parametrize("eps0,k,n", [(0.5, 3, 12), (1.0, 5, 6)])
def test_k_ary_randomized_response_brackets_the_multinomial_sum(eps0: float, k: int, n: int) -> None:
    """n-fold k-ary randomized response: lower ≤ exact δ ≤ upper (multinomial sum)."""
    for eps in (0.0, 0.4, 1.5, 3.0):
        exact = _rr_delta(eps0, k, n, eps)
        lo, hi = delta_bounds([(RandomizedResponse(eps0, k=k), n)], eps)
        assert lo <= exact * (1 + 1e-9) + 1e-300 and exact <= hi * (1 + 1e-12)


def test_k_fold_gaussian_epsilon_forced_pld_is_valid_and_tight() -> None:
    """method='pld' on Gaussians: ε ≥ the exact GDP ε and within 0.1 %."""
    for k, d in ((3, 1e-5), (100, 1e-8)):
        exact = routes.best_epsilon((Gaussian(2.0), k), d, "exact").value
        got = routes.best_epsilon((Gaussian(2.0), k), d, "pld")
        assert exact <= got.value <= exact * 1.001
        assert got.lower is not None and got.lower <= exact


def test_edges_are_finite_and_valid() -> None:
    """δ = 1e-30 on a mixture, δ at ε = 1000: finite, valid, no exception."""
    # one neighbouring relation throughout (add/remove: a pure-DP value rather than randomized
    # response, which is replace-one and would send the subsampled steps through group privacy)
    mixed = [(Laplace(20.0), 30), (renyi.PureDP(0.2), 10), (PoissonSubsampled(Gaussian(1.5), 0.02), 500)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RenyiNumericalWarning)
        lo, hi = epsilon_bounds(mixed, 1e-30)
        assert 0 < lo <= hi < math.inf
        assert hi <= routes.best_epsilon(mixed, 1e-30, "rdp").value
        lo, hi = delta_bounds([(PoissonSubsampled(Gaussian(1.0), 0.01), 1000)], 1000.0)
        assert 0.0 <= lo <= hi < 1e-100


@pytest.mark.slow
def test_long_compositions_are_finite_and_valid() -> None:
    """q = 1 at T = 10⁵ (the Gaussian: never below the exact ε); trade-off at T = 10⁶."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RenyiNumericalWarning)
        exact = routes.best_epsilon((Gaussian(3.0), 10**5), 1e-10, "exact").value
        lo, hi = epsilon_bounds([(PoissonSubsampled(Gaussian(3.0), 1.0), 10**5)], 1e-10)
        assert lo <= exact <= hi
        m = PoissonSubsampled(Gaussian(2.0), 0.001)
        t = tradeoff([(m, 10**6)], [1e-3, 0.1])
        assert np.all(np.isfinite(t.upper)) and np.all(t.lower <= t.upper)


def test_named_pld_route_errors_are_clear() -> None:
    """method='pld' on a mechanism without a known loss, or δ ∉ (0, 1): a clear error."""
    from renyi.definitions import RDP

    with pytest.raises(ConversionError, match="privacy loss distribution"):
        routes.best_epsilon((RDP(lambda a: 0.1 * a), 3), 1e-5, "pld")
    for bad in (0.0, 1.0, 2.0):
        with pytest.raises(DomainError, match="delta"):
            routes.best_epsilon((Gaussian(1.0), 3), bad, "pld")


@pytest.mark.optional
def test_dpsgd_upper_is_above_dp_accounting_optimistic_pld() -> None:
    """DP-SGD: renyi's certified upper ε ≥ dp-accounting's optimistic PLD at a fine grid."""
    from _peers import need

    need("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as peer_pld

    for q, sigma, steps, d in ((0.05, 0.8, 200, 1e-8),):
        one = peer_pld.from_gaussian_mechanism(sigma, sensitivity=1.0, pessimistic_estimate=False,
                                               value_discretization_interval=1e-4, sampling_prob=q,
                                               use_connect_dots=False)
        peer = one.self_compose(steps).get_epsilon_for_delta(d)
        lo, hi = epsilon_bounds([(PoissonSubsampled(Gaussian(sigma), q), steps)], d)
        assert hi >= peer * (1 - 1e-9)
        assert hi <= peer * 1.05  # the comparison is meaningful (same pair, same scale)


# ----------------------------------------------------------------------------------------------
# report, CLI and figure
# ----------------------------------------------------------------------------------------------
_PIPE = """
title = "small"
[privacy]
delta = 1e-6
[[mechanism]]
name = "counts"
type = "laplace"
scale = 10.0
count = 5
[[mechanism]]
name = "survey"
type = "randomized_response"
epsilon = 0.5
count = 3
"""


def test_report_and_plot_give_the_gdp_line_and_the_curve(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """`renyi report --json` carries the μ-GDP statement beside the TPR rows; the text line is
    rendered; `renyi plot tradeoff` writes the figure; a bad output path is exit 2."""
    import io
    import json

    from rich.console import Console
    from typer.testing import CliRunner

    import renyi.cli.report as cli_report
    from renyi.cli import app
    from renyi.pipeline import load_pipeline
    from renyi.report import compute_report

    f = tmp_path / "p.toml"
    f.write_text(_PIPE)
    r = compute_report(load_pipeline(f))
    d = r.to_dict()
    g = d["gdp"]
    assert g["method"] == "pld" and g["delta0"] == 1e-12 and 0 < g["lower"] <= g["mu"] < math.inf
    json.dumps(d, allow_nan=False)
    # the TPR rows never exceed the μ-GDP statement's TPR (both certified; the PLD curve is tighter)
    for row in d["tradeoff"]:
        assert row["route"] == "pld"
        assert row["tpr"] <= float(gdp_tpr(g["mu"], row["fpr"])) + g["delta0"] + 1e-12
    buf = io.StringIO()
    monkeypatch.setattr(cli_report, "console", lambda: Console(file=buf, width=200))
    cli_report.render_report(r)
    assert "μ-GDP: μ ≤ " in buf.getvalue() and "attacker's TPR" in buf.getvalue()

    from renyi.plots import figure_for, save_figure

    out = tmp_path / "t.png"
    save_figure(figure_for("tradeoff", report=r, points=5, log_fpr=True), out)
    assert out.stat().st_size > 1000
    # the CLI command exists and checks its output before computing anything
    res = CliRunner().invoke(app, ["plot", "tradeoff", str(f), "-o", str(tmp_path / "t.txt")])
    assert res.exit_code == 2 and "png" in res.output
    res = CliRunner().invoke(app, ["plot", "tradeoff", "--help"])
    assert res.exit_code == 0 and "--log-fpr" in res.output


@pytest.mark.slow
def test_plot_tradeoff_cli_writes_a_figure(tmp_path) -> None:  # noqa: ANN001
    """`renyi plot tradeoff --json` writes the file and reports the μ-GDP statement."""
    import json

    from typer.testing import CliRunner

    from renyi.cli import app

    f = tmp_path / "p.toml"
    f.write_text(_PIPE)
    out = tmp_path / "t.svg"
    res = CliRunner().invoke(app, ["plot", "tradeoff", str(f), "-o", str(out), "--points", "8", "--json"],
                             catch_exceptions=False)
    assert res.exit_code == 0 and out.stat().st_size > 1000
    assert json.loads(res.output)["gdp"]["method"] == "pld"


def test_tradeoff_data_series_are_ordered() -> None:
    """The figure's series: diagonal ≤ PLD lower ≤ PLD upper ≤ μ-GDP curve, PLD ≤ RDP."""
    from renyi.plots import tradeoff_data

    d = tradeoff_data([(PoissonSubsampled(Gaussian(1.0), 0.05), 50)], points=5, log_fpr=True)
    assert d["fpr"][0] == pytest.approx(1e-5) and d["fpr"][-1] == pytest.approx(1.0)
    x = d["fpr"]
    assert np.all(x <= d["pld_lower"] + 1e-15) and np.all(d["pld_lower"] <= d["pld_upper"])
    assert np.all(d["pld_upper"] <= d["gdp_tpr"] * (1 + 1e-9))
    assert np.all(d["pld_upper"] <= d["rdp"] * (1 + 1e-9))


def test_curves_at_numerical_extremes_are_valid_and_never_raise() -> None:
    """Huge per-run ε, μ = 0 and pure DP at ε = 0: valid (possibly trivial) answers, no exception."""
    from renyi.definitions import GDP

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RenyiNumericalWarning)
        t = tradeoff([(RandomizedResponse(50.0), 3)], [0.0, 1e-3, 0.5, 1.0])
    assert np.all(t.lower <= t.upper) and np.all(t.upper <= 1.0) and t.upper[-1] == 1.0
    t = tradeoff([(GDP(0.0), 1)], [0.1, 0.5])
    assert np.allclose(t.upper, [0.1, 0.5]) and np.allclose(t.lower, [0.1, 0.5])
    assert gdp_mu([(GDP(0.0), 2)]).mu == 0.0
    assert epsilon_bounds([(GDP(0.0), 3)], 1e-5) == (0.0, 0.0)
    t = tradeoff([(PureDP(0.0), 4)], [0.2])
    assert t.upper[0] == pytest.approx(0.2)


def test_tradeoff_figure_says_fpr_and_shows_low_rates_on_log_axes() -> None:
    """The FPR axis is not labelled α (renyi's word for the Rényi order), and the axes are
    logarithmic by default: the low false-positive rates the report quotes are visible."""
    from renyi.plots import tradeoff_figure

    step = [(PoissonSubsampled(Gaussian(1.0), 0.05), 50)]
    ax = tradeoff_figure(step, points=5).axes[0]
    assert "α" not in ax.get_xlabel() and "FPR" in ax.get_xlabel()
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log" and ax.get_xlim()[0] <= 1e-5
    lin = tradeoff_figure(step, points=5, log_fpr=False).axes[0]
    assert lin.get_xscale() == "linear"
