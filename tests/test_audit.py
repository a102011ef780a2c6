"""renyi.audit: the estimators' mathematics, golden values, bad input, and peers side by side."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import special, stats

import renyi
from renyi.audit import DESIGN_METHODS, DESIGNS, METHODS, AuditResult, audit, epsilon_lower_bound, read_scores
from renyi.audit._binomial import _window_max, clopper_pearson_upper, one_run_epsilon, one_run_p_value
from renyi.audit.bounds import _corners, _grid, _ranks, gdp_epsilon_lower


def _gauss(n: int, mu: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    b = rng.random(n) < 0.5
    return rng.standard_normal(n) + mu * b, b


# ---------------------------------------------------------------- Clopper–Pearson
def test_clopper_pearson_matches_scipy_binomtest() -> None:
    """The upper bound equals scipy's exact one-sided Clopper–Pearson interval."""
    for k, n in [(0, 10), (3, 10), (9, 10), (50, 1000), (999, 1000)]:
        ref = stats.binomtest(k, n).proportion_ci(confidence_level=0.99, method="exact").high
        # binomtest's two-sided interval at 0.99 puts 0.005 in the upper tail
        assert clopper_pearson_upper(k, n, 0.005) == pytest.approx(ref, rel=1e-9)
    assert clopper_pearson_upper(10, 10, 0.05) == 1.0


def test_clopper_pearson_golden_zero_successes() -> None:
    """k = 0: the bound solves (1 − p)^n = γ, p = 1 − γ^{1/n} (the 'rule of three' in the limit)."""
    assert clopper_pearson_upper(0, 100, 0.05) == pytest.approx(1 - 0.05 ** (1 / 100), rel=1e-10)


@given(st.integers(1, 60), st.floats(0.001, 0.3))
def test_clopper_pearson_coverage_is_exact(n: int, gamma: float) -> None:
    """P[p > U(X)] ≤ γ for p on a grid, computed exactly over X ~ Binomial(n, p)."""
    ks = np.arange(n + 1)
    u = clopper_pearson_upper(ks, n, gamma)
    for p in np.linspace(0.001, 0.999, 37):
        miss = stats.binom.pmf(ks, n, p)[u < p].sum()
        assert miss <= gamma * (1 + 1e-9)


def test_order_statistic_identity() -> None:
    """The (k+1)-th largest of n uniforms exceeds the CP bound for k with probability exactly γ."""
    n, k, gamma = 50, 3, 0.01
    u = clopper_pearson_upper(k, n, gamma)
    assert stats.beta.sf(u, k + 1, n - k) == pytest.approx(gamma, rel=1e-8)


# ---------------------------------------------------------------- one-run p-value (SNJ23 Thm 3)
def _p_value_brute(m: int, r: int, v: int, eps: float, delta: float) -> float:
    q = special.expit(eps)
    fv = stats.binom.sf(v - 1, r, q)
    if v == 0 or delta == 0:
        return min(1.0, fv)
    i = np.arange(1, v + 1)
    return min(1.0, fv + 2 * m * delta * float(np.max((stats.binom.sf(v - i - 1, r, q) - fv) / i)))


@given(st.integers(1, 400), st.data(), st.floats(0.0, 8.0))
def test_window_maximum_equals_brute_force(r: int, data: st.DataObject, eps: float) -> None:
    """The O(log v) search for max_i (f(v−i) − f(v))/i finds the brute-force maximum."""
    v = data.draw(st.integers(0, r))
    q = special.expit(eps)
    fv = stats.binom.sf(v - 1, r, q)
    got = float(_window_max(np.float64(r), np.float64(v), np.float64(q), np.float64(fv)))
    if v == 0:
        assert got == 0.0
        return
    # the window masses as sums of pmfs: no cancellation in either tail
    masses = np.cumsum(stats.binom.pmf(np.arange(v - 1, -1, -1), r, q))
    want = float(np.max(masses / np.arange(1, v + 1)))
    assert got == pytest.approx(want, rel=1e-7, abs=1e-300)


def test_p_value_matches_the_authors_algorithm() -> None:
    """Golden values: the p-value of SNJ23 Alg. 2, evaluated directly (brute force over i)."""
    for m, r, v, eps, delta in [(1000, 600, 600, 2.0, 1e-5), (10_000, 1024, 925, 1.9, 1e-5),
                                (500, 100, 70, 0.5, 1e-3), (1000, 10, 3, 0.0, 0.0)]:
        assert float(one_run_p_value(m, r, v, eps, delta)) == pytest.approx(_p_value_brute(m, r, v, eps, delta),
                                                                            rel=1e-9)


@pytest.mark.parametrize(("m", "r", "v"), [(1000, 200, 150), (10_000, 1000, 900), (200, 50, 50)])
def test_p_value_non_decreasing_in_epsilon(m: int, r: int, v: int) -> None:
    """A weaker hypothesis (larger ε) never gets a smaller p-value: what the ε search relies on."""
    p = one_run_p_value(m, r, v, np.linspace(0, 12, 600), 1e-5)
    assert np.all(np.diff(p) >= -1e-15)


def test_one_run_epsilon_is_the_rejection_boundary() -> None:
    """At the returned ε the test rejects; a hair above it (10⁻⁶) it does not."""
    m, r, v, delta, gamma = 1000, 100, 95, 1e-5, 0.005
    e = float(one_run_epsilon(m, r, v, delta, gamma))
    assert float(one_run_p_value(m, r, v, e, delta)) <= gamma
    assert float(one_run_p_value(m, r, v, e + 1e-6, delta)) > gamma


def test_one_run_epsilon_all_correct_golden() -> None:
    """r = v, δ = 0: the bound solves q^r = γ, q = e^ε/(1 + e^ε), i.e. ε = logit(γ^{1/r})."""
    e = float(one_run_epsilon(1000, 100, 100, 0.0, 0.05))
    assert e == pytest.approx(special.logit(0.05 ** (1 / 100)), rel=1e-6)
    assert e <= special.logit(0.05 ** (1 / 100))


# Golden values: Steinke, Nasr & Jagielski's bound for fixed (m, r, v) at δ = 1e-5, β = 0.05, as
# computed by an independent port of the authors' reference code (github.com/zihangxiang/
# tight-privacy-audit-in-one-run, compare/RESULTS.txt, "Steinke" column): the idealised Gaussian
# setting with v = r − round(E[mistakes]). Rows (μ, m, r, mistakes, ε). That port sums the δ-window
# as P[v−i < X ≤ v] where the authors' Algorithm 2 sums P[v−i ≤ X < v]; the two agree to 1e-4
# except where the 2mδ term matters (μ = 2, r = 1000: 0.15 % lower; m = 1000: 0.03 % lower).
SNJ23_PORT = [(0.5, 10_000, 1000, 259, 0.9277), (0.5, 10_000, 2500, 755, 0.7643), (0.5, 10_000, 5000, 1721, 0.5948),
              (0.5, 10_000, 10_000, 4013, 0.3661), (1, 10_000, 1000, 97, 2.0466), (1, 10_000, 2500, 364, 1.6736),
              (1, 10_000, 5000, 1034, 1.2858), (1, 10_000, 10_000, 3085, 0.7711), (2, 10_000, 1000, 5, 4.4836),
              (2, 10_000, 2500, 36, 3.9322), (2, 10_000, 5000, 202, 3.0457), (2, 10_000, 10_000, 1587, 1.6223),
              (0.5, 1000, 100, 26, 0.6519), (1, 100_000, 10_000, 967, 2.1713), (2, 100_000, 100_000, 15866, 1.6535)]


@pytest.mark.parametrize(("mu", "m", "r", "u", "ref"), SNJ23_PORT)
def test_one_run_epsilon_matches_an_independent_port_of_the_reference_code(mu: float, m: int, r: int, u: int,
                                                                             ref: float) -> None:
    e = float(one_run_epsilon(m, r, r - u, 1e-5, 0.05))
    assert e == pytest.approx(ref, rel=2e-3)
    assert e <= ref + 1e-4  # never above: Alg. 2's window is the larger one near the top


def test_one_run_fixed_guesses_is_the_single_test() -> None:
    """guesses=k: the bound is the one test at level β (no grid, no Bonferroni) on the k highest
    and k lowest scores; it is refused for other methods and outside [1, m/2]."""
    s, b = _gauss(4000, 1.0, 11)
    r = epsilon_lower_bound(s, b, delta=1e-5, method="one_run", guesses=300)
    order = np.argsort(-s)
    v = int(b[order[:300]].sum() + (~b[order[-300:]]).sum())
    assert r.epsilon == pytest.approx(float(one_run_epsilon(4000, 600, v, 1e-5, 0.05)), rel=1e-12)
    assert f"{v} of 600 guesses correct" in r.witness and "fixed in advance" in r.witness
    with pytest.raises(renyi.DomainError, match=r"guesses must be in \[1, 2000\]"):
        epsilon_lower_bound(s, b, delta=1e-5, method="one_run", guesses=2001)
    with pytest.raises(renyi.DomainError, match="guesses applies to method='one_run' only"):
        epsilon_lower_bound(s, b, delta=1e-5, method="threshold", guesses=10)
    with pytest.raises(TypeError):
        epsilon_lower_bound(s, b, delta=1e-5, method="one_run", guesses=1.5)  # type: ignore[arg-type]


# ---------------------------------------------------------------- the threshold corners
def test_threshold_grid_is_doubling() -> None:
    assert list(_grid(10)) == [0, 1, 2, 4, 8]
    assert list(_grid(1)) == [0]


def test_corners_counts_golden() -> None:
    """A hand-checked case: scores 1..6, included = the three highest."""
    s = np.arange(1.0, 7.0)
    inc = np.array([False, False, False, True, True, True])
    fpr, fnr, k = _corners(_ranks(s, 0), inc, 0.05)
    gamma = 0.05 / (2 * (3 + 3))
    # family A, k = 0: threshold at the highest excluded score (3): 0 false positives, 0 false negatives
    assert fpr[0] == pytest.approx(clopper_pearson_upper(0, 3, gamma))
    assert fnr[0] == pytest.approx(clopper_pearson_upper(0, 3, gamma))
    assert list(k) == [0, 1, 2, -1, -2, -3]


def test_perfect_separation_gives_the_known_bound() -> None:
    """n excluded all below n included: ε ≥ log((1 − δ − FNR⁺)/FPR⁺) with FPR⁺ = FNR⁺ = 1 − γ^{1/n}."""
    n = 500
    s = np.concatenate([np.zeros(n), np.ones(n)]) + np.linspace(0, 0.5, 2 * n)
    inc = np.arange(2 * n) >= n
    r = epsilon_lower_bound(s, inc, delta=0.0, confidence=0.95)
    gamma = 0.05 / (2 * 2 * len(_grid(n)))
    u = 1 - gamma ** (1 / n)
    assert r.epsilon == pytest.approx(math.log((1 - u) / u), rel=1e-9)
    assert r.epsilon <= math.log((1 - u) / u)


def test_no_signal_gives_zero() -> None:
    """Scores independent of inclusion: every method's bound is (almost surely) 0."""
    rng = np.random.default_rng(1)
    s, inc = rng.standard_normal(2000), rng.random(2000) < 0.5
    for m in METHODS:
        r = epsilon_lower_bound(s, inc, delta=1e-5, method=m)
        assert r.epsilon == 0.0


def test_ties_are_broken_independently_of_labels() -> None:
    """Binary scores (randomised response): the bound is finite and ≤ the truth (ε₀ = 1)."""
    rng = np.random.default_rng(2)
    inc = rng.random(4000) < 0.5
    truthful = rng.random(4000) < special.expit(1.0)
    s = np.where(truthful, inc, ~inc).astype(float)
    r = epsilon_lower_bound(s, inc, delta=1e-6)
    assert 0.5 < r.epsilon <= 1.0


def test_result_is_deterministic_for_a_seed() -> None:
    s, b = _gauss(1000, 1.0, 3)
    assert epsilon_lower_bound(s, b, delta=1e-5) == epsilon_lower_bound(s, b, delta=1e-5)


# ---------------------------------------------------------------- monotonicity laws
def test_bound_decreases_with_confidence_and_delta() -> None:
    """Asking for more confidence, or at a larger δ, never raises the lower bound."""
    s, b = _gauss(3000, 1.5, 4)
    for m in METHODS:
        e = [epsilon_lower_bound(s, b, delta=1e-5, confidence=c, method=m).epsilon for c in (0.5, 0.9, 0.99)]
        assert e[0] >= e[1] >= e[2]
        e = [epsilon_lower_bound(s, b, delta=d, method=m).epsilon for d in (1e-8, 1e-5, 1e-2)]
        assert e[0] >= e[1] >= e[2]


# ---------------------------------------------------------------- GDP
def test_gdp_epsilon_lower_matches_renyi_exact_conversion() -> None:
    """The rounded-down GDP ε is within 1e-12 of renyi's rounded-up exact conversion, and below it."""
    for mu in (0.3, 1.0, 2.5, 6.0):
        up = renyi.conversions.gdp_to_approx_dp(mu, 1e-5).value
        down = gdp_epsilon_lower(mu, 1e-5)
        assert down <= up
        assert down == pytest.approx(up, rel=1e-10)


def test_gdp_mu_is_reported_and_assumption_stated() -> None:
    s, b = _gauss(4000, 2.0, 5)
    r = epsilon_lower_bound(s, b, delta=1e-5, method="gdp")
    assert r.mu is not None and 1.5 < r.mu <= 2.0
    assert r.epsilon == pytest.approx(gdp_epsilon_lower(r.mu, 1e-5))
    assert "Gaussian" in r.assumption
    assert epsilon_lower_bound(s, b, delta=1e-5).assumption == ""


# ---------------------------------------------------------------- the result value
def test_result_fields_and_tradeoff() -> None:
    s, b = _gauss(1000, 1.0, 6)
    r = epsilon_lower_bound(s, b, delta=1e-5)
    assert isinstance(r, AuditResult)
    assert (r.method, r.confidence, r.delta, r.canaries, r.included) == ("threshold", 0.95, 1e-5, 1000, int(b.sum()))
    t = r.tradeoff
    assert t.fpr[0] == 0.0 and t.fpr[-1] == 1.0 and t.tpr[-1] == 1.0
    assert np.all(np.diff(t.fpr) >= 0) and np.all(np.diff(t.tpr) >= 0)
    assert t.fpr_upper.size == t.tpr_lower.size > 0
    assert "ε ≥" in str(r) and r.to_dict()["method"] == "threshold"


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize(("kwargs", "words"), [
    ({"scores": [0.1, float("nan"), 0.3, 0.4]}, "scores must be finite numbers; got nan at position 1"),
    ({"scores": [0.1, float("inf"), 0.3, 0.4]}, "scores must be finite"),
    ({"included": [0, 0, 0, 0]}, "at least one included and one excluded canary; got 0 included of 4"),
    ({"included": [1, 1, 1, 1]}, "got 4 included of 4"),
    ({"included": [0, 1, 2, 1]}, "included must be booleans or 0/1; got 2 at position 2"),
    ({"included": [0, 1]}, "included must have one entry per score (4)"),
    ({"confidence": 1.0}, "confidence must be in (0, 1); got 1.0"),
    ({"confidence": 0.0}, "confidence must be in (0, 1)"),
    ({"confidence": -0.5}, "confidence must be in (0, 1)"),
    ({"confidence": float("nan")}, "confidence must be a number, not NaN"),
    ({"delta": 1.0}, "delta must be in [0, 1); got 1.0"),
    ({"delta": -1e-5}, "delta must be in [0, 1)"),
    ({"method": "bayes"}, "method must be one of threshold, one_run, gdp; got 'bayes'"),
    ({"delta": 0.0, "method": "gdp"}, "delta must be in (0, 1); got 0.0"),
    ({"scores": [[0.1, 0.2], [0.3, 0.4]]}, "scores must be one-dimensional"),
])
def test_bad_input_is_a_domain_error(kwargs: dict[str, object], words: str) -> None:
    """Every bad input names the parameter, the valid range and the value."""
    args: dict[str, object] = {"scores": [0.1, 0.2, 0.3, 0.4], "included": [0, 1, 0, 1], "delta": 1e-5}
    args.update(kwargs)
    with pytest.raises(renyi.DomainError) as e:
        epsilon_lower_bound(args.pop("scores"), args.pop("included"), **args)  # type: ignore[arg-type]
    assert words in str(e.value)


def test_one_run_refuses_a_design_that_is_not_fair_coins() -> None:
    """90 % included cannot come from fair coins: the one-run theorem does not apply."""
    rng = np.random.default_rng(7)
    s, inc = rng.standard_normal(1000), np.arange(1000) < 900
    with pytest.raises(renyi.DomainError, match="fair coin"):
        epsilon_lower_bound(s, inc, delta=1e-5, method="one_run")
    assert epsilon_lower_bound(s, inc, delta=1e-5).epsilon >= 0.0  # threshold accepts it


def test_wrong_types_are_type_errors() -> None:
    with pytest.raises(TypeError):
        epsilon_lower_bound("0.1,0.2", [0, 1], delta=1e-5)
    with pytest.raises(TypeError):
        epsilon_lower_bound([0.1, 0.2], ["a", "b"], delta=1e-5)


# ---------------------------------------------------------------- beside the accounting
def test_audit_report_beside_certified_bound() -> None:
    """The Gaussian mechanism audited against its own declaration: audit ≤ lower ≤ certified."""
    s, b = _gauss(10_000, 2.0, 8)
    rep = audit(s, b, delta=1e-5, event=renyi.Gaussian(0.5))
    assert rep.certified == pytest.approx(renyi.Gaussian(0.5).epsilon(1e-5))
    assert rep.lower is not None and rep.lower <= rep.certified
    for r in rep.results:
        assert r.epsilon <= rep.lower
    assert rep.contradictions() == ()
    assert rep.to_dict()["results"][0]["method"] == "threshold"


def test_audit_flags_a_run_that_is_not_the_declared_event() -> None:
    """Scores of σ = 0.25 declared as σ = 4: the audit exceeds the certified ε and says so."""
    s, b = _gauss(10_000, 4.0, 9)
    rep = audit(s, b, delta=1e-5, methods=("threshold", "one_run"), event=renyi.Gaussian(4.0))
    assert set(rep.contradictions()) == {"threshold", "one_run"}


def test_each_result_states_the_design_it_needs() -> None:
    """threshold and gdp need independent trials; one_run one run with a fair coin per canary."""
    s, b = _gauss(1000, 1.0, 2)
    for m in METHODS:
        r = epsilon_lower_bound(s, b, delta=1e-5, method=m)
        assert r.design == DESIGNS[m] and r.to_dict()["design"] == DESIGNS[m]
    assert "not one run with many canaries" in DESIGNS["threshold"]
    assert "not one run with many canaries" in DESIGNS["gdp"]
    assert "fair coin" in DESIGNS["one_run"]
    doc = " ".join((epsilon_lower_bound.__doc__ or "").split())  # the docstring states each design
    assert doc.count("*design: independent trials*") == 2 and "*design: one training run*" in doc


def test_audit_design_selects_the_valid_methods() -> None:
    """design="one_run" (one training run, many canaries) runs only one_run and refuses the others;
    design="independent" runs all three; no design keeps the old default (all three)."""
    s, b = _gauss(2000, 1.0, 3)
    rep = audit(s, b, delta=1e-5, design="one_run")
    assert [r.method for r in rep.results] == ["one_run"] and rep.design == "one_run"
    assert rep.to_dict()["design"] == "one_run"
    assert [r.method for r in audit(s, b, delta=1e-5, design="independent").results] == list(METHODS)
    assert [r.method for r in audit(s, b, delta=1e-5).results] == list(METHODS)
    assert DESIGN_METHODS["one_run"] == ("one_run",)
    for m in ("threshold", "gdp"):
        with pytest.raises(renyi.DomainError, match=f"method '{m}' needs independent trials"):
            audit(s, b, delta=1e-5, design="one_run", methods=[m])
    with pytest.raises(renyi.DomainError, match="design must be one of one_run, independent or None; got 'x'"):
        audit(s, b, delta=1e-5, design="x")


def test_audit_bad_methods() -> None:
    s, b = _gauss(100, 1.0, 1)
    with pytest.raises(renyi.DomainError, match="methods must be a non-empty subset"):
        audit(s, b, delta=1e-5, methods=())
    with pytest.raises(renyi.DomainError, match="delta must be in"):
        audit(s, b, delta=0.0)


def test_read_scores(tmp_path: object) -> None:
    from pathlib import Path

    p = Path(str(tmp_path)) / "s.csv"
    p.write_text("id,score,included\na,0.5,1\nb,-1.25,false\nc,3,YES\nd,2,out\n", encoding="utf-8")
    s, inc = read_scores(p)
    assert list(s) == [0.5, -1.25, 3.0, 2.0] and list(inc) == [True, False, True, False]
    p.write_text("score,included\n0.5,maybe\n", encoding="utf-8")
    with pytest.raises(renyi.DomainError, match="line 2: included must be 1/0"):
        read_scores(p)
    p.write_text("score,included\nabc,1\n", encoding="utf-8")
    with pytest.raises(renyi.DomainError, match="line 2: score must be a number; got 'abc'"):
        read_scores(p)
    p.write_text("s,included\n1,1\n", encoding="utf-8")
    with pytest.raises(renyi.DomainError, match="no column 'score'"):
        read_scores(p)
    p.write_text("score,included\n", encoding="utf-8")
    with pytest.raises(renyi.DomainError, match="no rows"):
        read_scores(p)
    with pytest.raises(renyi.DomainError, match="cannot read scores"):
        read_scores(p.parent / "missing.csv")


# ---------------------------------------------------------------- jax-privacy side by side
def test_side_by_side_with_jax_privacy() -> None:
    """Same scores: renyi's three bounds next to jax-privacy's auditor (Bonferroni strategy).

    Both are valid lower bounds of the same quantities; renyi's threshold and gdp use a doubling
    grid of thresholds (fewer Bonferroni terms) and its one-run audit guesses on both ends, so
    each is within a few per cent of, or above, jax-privacy's. The one-run p-value is the same
    theorem: it agrees with jax-privacy's to 1e-9.
    """
    auditing = pytest.importorskip("jax_privacy.auditing")
    s, b = _gauss(10_000, 1.0, 7)
    a = auditing.CanaryScoreAuditor(s[b], s[~b])
    ours = {m: epsilon_lower_bound(s, b, delta=1e-5, method=m).epsilon for m in METHODS}
    theirs = {"threshold": a.epsilon_clopper_pearson(0.05, 1e-5), "one_run": a.epsilon_one_run(0.05, 1e-5),
              "gdp": a.epsilon_from_gdp(0.05, 1e-5)}
    truth = renyi.Gaussian(1.0).epsilon(1e-5)
    for m in METHODS:
        assert ours[m] <= truth and theirs[m] <= truth
        assert ours[m] >= 0.95 * theirs[m], (m, ours[m], theirs[m])
    p_value = getattr(auditing, "_one_run_p_value", None)
    if p_value is not None:
        for m, r, v, e in [(10_000, 1024, 925, 1.9), (1000, 100, 80, 0.7)]:
            assert float(one_run_p_value(m, r, v, e, 1e-5)) == pytest.approx(p_value(m, r, v, e, 1e-5), rel=1e-9)
