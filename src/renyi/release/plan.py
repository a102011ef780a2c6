"""From a spec to a plan: derived sensitivities, the budget split and the calibrated noise.

Nothing here reads data. For every query the plan holds one or two *measurements* (a count
vector, a sum vector; a mean has both), each one vector release over the query's public key
list with:

* the sensitivities **derived** from the enforced contribution bounds and the clamping
  range (:func:`derive_sensitivity`), never typed by hand;
* its share ρ_i of the release's ρ (by weight; a mean's share split between its sum and its
  count); the shares add up to at most ρ ([BS16] Lemma 7);
* the noise calibrated to that share on the safe side (:func:`renyi.calibrate`);
* its expected accuracy: the half-width of a 95 % interval per cell.

The groups of a query are disjoint cells of one vector, released at once: their cost is that
of one release with the vector's ℓ₂ (or ℓ₁) sensitivity, never one composition per cell
(parallel composition).

    >>> derive_sensitivity(rows=3, groups=None, rows_per_group=None, cells=100)
    Sensitivity(l1=3.0, l2=3.0, per_row=1, rows=3, groups=3, rows_per_group=3)
    >>> derive_sensitivity(rows=4, groups=4, rows_per_group=1, cells=100).l2
    2.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from renyi.release.spec import QuerySpec, ReleaseSpec, SpecError

__all__ = ["Sensitivity", "Measurement", "QueryPlan", "Plan", "derive_sensitivity", "make_plan",
           "centring", "levels", "COVERAGE", "HOLD_BACK", "RATIO_TYPES"]

#: Query types released as a ratio of noisy measurements (their intervals depend on the count).
RATIO_TYPES = ("mean", "variance", "std")
#: Query types whose interval is not value ± a fixed half-width (no per-cell ± in the plan).
NO_HALF_WIDTH = (*RATIO_TYPES, "quantile")
#: Cells assumed for a query whose keys are discovered (unknown before the data are read: the
#: bounds then come from the per-person limits alone).
UNBOUNDED_CELLS = 2**31 - 1

#: Coverage of the released intervals.
COVERAGE = 0.95
#: Fraction of the budget not handed out, so that float rounding in the sum of the shares can
#: never exceed the budget (the ledger's check rounds up).
HOLD_BACK = 1e-9


@dataclass(frozen=True, slots=True)
class Sensitivity:
    """How much one individual can move a released vector (add/remove one individual).

    With at most ``rows`` rows per individual, at most ``groups`` groups per individual and at
    most ``rows_per_group`` rows per individual in one group, an individual adds a vector c of
    non-negative integers with Σc ≤ rows, at most ``groups`` non-zero entries, each ≤
    ``rows_per_group``; each row moves a sum by at most ``per_row`` (the clamping bound in
    units of the granularity). Hence ℓ₁ = per_row·min(rows, groups·rows_per_group), and ℓ₂ is
    the largest ‖c‖₂ under those constraints (a convex function, maximal at a vertex: fill
    groups to ``rows_per_group`` one after another), times ``per_row``.

    Attributes:
        l1: ℓ₁-sensitivity (an integer-valued float).
        l2: ℓ₂-sensitivity.
        per_row: largest |value| one row adds (1 for counts).
        rows, groups, rows_per_group: the effective bounds used.
    """

    l1: float
    l2: float
    per_row: int
    rows: int
    groups: int
    rows_per_group: int

    def derivation(self) -> str:
        """The derivation in words, e.g. ``ℓ₁ = 1 × min(3, 1×3) = 3; ℓ₂ = 1 × √(1×3²) = 3``."""
        m, g, r, b = self.rows, self.groups, self.rows_per_group, self.per_row
        full = min(m // r, g)
        rem = m - full * r if full < g else 0
        sq = f"{full}×{r}²" + (f" + {rem}²" if rem else "")
        return (f"ℓ₁ = {b} × min({m} rows, {g} groups × {r} rows) = {_num(self.l1)}; "
                f"ℓ₂ = {b} × √({sq}) = {_num(self.l2)}")


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.6g}"


def derive_sensitivity(rows: int, groups: int | None, rows_per_group: int | None, cells: int,
                       per_row: int = 1) -> Sensitivity:
    """Derive the ℓ₁/ℓ₂ sensitivities of a grouped count (``per_row = 1``) or clamped sum.

    Args:
        rows: m ≥ 1, rows kept per individual.
        groups: groups one individual may touch (None: unbounded).
        rows_per_group: rows one individual may add to one group (None: unbounded).
        cells: number of groups released (an individual cannot touch more).
        per_row: largest |value| of one row, in noise units (integer ≥ 0).

    Returns:
        The :class:`Sensitivity` (upper bounds on how far adding or removing one individual
        moves the vector, in ℓ₁ and ℓ₂).
    """
    g = min(rows, cells, groups if groups is not None else rows)
    r = min(rows, rows_per_group if rows_per_group is not None else rows)
    full = min(rows // r, g)  # groups filled to r rows
    rem = rows - full * r if full < g else 0  # the rest goes into one more group
    l1 = per_row * min(rows, g * r)
    sq = per_row * per_row * (full * r * r + rem * rem)  # ℓ₂², an exact integer
    root = math.isqrt(sq)
    if root * root == sq:  # an integer ℓ₂ (the common case): exact, or rounded up beyond 2⁵³
        l2 = _up_float(root)
    elif sq < 2**1000:
        l2 = math.nextafter(math.sqrt(sq), math.inf)  # never below the true ℓ₂
    else:
        l2 = _up_float(root + 1)
    return Sensitivity(_up_float(l1), l2, per_row, rows, g, r)


def _up_float(n: int) -> float:
    """The integer n as a float not below it (inf beyond the largest double: the caller refuses it)."""
    if n >= 2**1024:
        return math.inf
    x = float(n)  # (rounds to nearest: at most one step up fixes it)
    return x if int(x) >= n else math.nextafter(x, math.inf)


@dataclass(frozen=True, slots=True)
class Measurement:
    """One noisy vector of a query: its counts or its (rounded, clamped) sums.

    Attributes:
        query: the query's name.
        kind: ``"count"`` or ``"sum"``.
        rho: its share of the budget (the ρ its mechanism achieves is ≤ this).
        sensitivity: the derived sensitivity (in noise units).
        mechanism: the calibrated mechanism (``DiscreteGaussian(vector=True)`` on the ℓ₂
            sensitivity, or ``DiscreteLaplace(vector=True)`` on the ℓ₁ sensitivity).
        unit: the value of one noise unit in output units (the granularity; 1 for counts).
        half_width: half-width of the per-cell interval at ``coverage``, in noise units.
        cells: length of the vector.
        coverage: the per-cell coverage of ``half_width``.
        centre: for a ``"sum"`` or ``"sum2"`` released beside a count, the integer c (noise
            units) subtracted from every row's value, so that one row moves the sum by at most
            ``per_row`` = max(H − c, c − L) over values in [L, H] instead of max(|L|, |H|);
            the count times c is added back after the noise (post-processing).
        shift: for ``"sum2"`` (the sum of (v − c)²), the integer q subtracted from every row's
            (v − c)² ∈ [0, B²], so that one row moves it by at most max(q, B² − q).
        level: the by columns of a coarser level of a ``consistent`` query (None: the query's
            own groups).
        keys: the keys of that level (None: the query's).
    """

    query: str
    kind: str
    rho: float
    sensitivity: Sensitivity
    mechanism: Any
    unit: float
    half_width: int
    cells: int
    coverage: float = 0.95
    centre: int = 0
    shift: int = 0
    level: tuple[str, ...] | None = None
    keys: tuple[tuple[str, ...], ...] | None = None
    runs: int = 1
    quantile: float | None = None
    slack: float = 0.0
    delta: float = 0.0
    threshold: int = 0

    @property
    def achieved_rho(self) -> float:
        """ρ of the calibrated mechanism, times the runs one person can affect (≤ :attr:`rho`)."""
        return self.runs * float(self.mechanism.guarantee.to_zcdp().rho)

    @property
    def noise_name(self) -> str:
        """The noise distribution in words ("discrete Gaussian", "discrete Laplace" or
        "exponential mechanism")."""
        return {"DiscreteGaussian": "discrete Gaussian", "DiscreteLaplace": "discrete Laplace"}.get(
            type(self.mechanism).__name__, "exponential mechanism")

    @property
    def noise_parameter(self) -> tuple[str, float]:
        """(``"sigma"``, σ) or (``"scale"``, t), in noise units; (``"epsilon"``, ε) for the
        exponential mechanism (its bounded-range parameter)."""
        name = type(self.mechanism).__name__
        if name == "DiscreteGaussian":
            return "sigma", float(self.mechanism.sigma)
        if name == "DiscreteLaplace":
            return "scale", float(self.mechanism.scale)
        return "epsilon", float(self.mechanism.bounded_range)

    def derivation(self) -> str:
        """How the sensitivity was derived, in words (the plan prints it)."""
        sens = self.sensitivity
        if self.kind.startswith("quantile"):
            q = self.quantile if self.quantile is not None else 0.5
            return (f"score sensitivity Δu = {sens.rows_per_group} rows × max(q, 1 − q) = {_num(self.mechanism.sensitivity)}"
                    f" (q = {q:g}); one person is in ≤ {self.runs} group(s): ρ = {self.runs} × ε²/8")
        if self.kind == "discovery":
            return (f"people per group: one person counts once in ≤ {sens.groups} group(s): ℓ₂ = √{sens.groups}; "
                    f"threshold {self.threshold}, δ = {self.delta:.3g}")
        return sens.derivation()

    @property
    def spend_item(self) -> Any:
        """What this measurement spends: the mechanism (with its runs), or for key discovery
        the δ-approximate zCDP guarantee of Gaussian thresholding."""
        if self.kind == "discovery":
            from renyi.guarantees import ApproxZCDP

            return ApproxZCDP(self.achieved_rho, 0.0, self.delta)
        return (self.mechanism, self.runs) if self.runs != 1 else self.mechanism


@dataclass(frozen=True, slots=True)
class QueryPlan:
    """A query and its measurements (one for count, sum, count_distinct and histogram; a count
    and a centred sum for a mean; a count, a centred sum and a centred sum of squares for a
    variance or std; one per level for a ``consistent`` query).

    Attributes:
        query: the query.
        measurements: its noisy vectors.
        rho: the ρ it was given (its measurements' ρ add up to at most this).
        needed_rho: for a query with a target, the smallest ρ meeting it (else None).
    """

    query: QuerySpec
    measurements: tuple[Measurement, ...]
    rho: float
    needed_rho: float | None = None

    @property
    def half_width(self) -> float | None:
        """Per-cell half-width in output units, at the query's coverage (None for a mean,
        variance, std or quantile: it depends on the data)."""
        if self.query.type in NO_HALF_WIDTH:
            return None
        m = self.measurements[-1]
        return m.half_width * m.unit

    @property
    def coverage(self) -> float:
        """The per-cell coverage of the released intervals."""
        return self.query.target.coverage if self.query.target is not None else COVERAGE


@dataclass(frozen=True, slots=True)
class Plan:
    """The whole release: every query's measurements, and the total ρ spent."""

    spec: ReleaseSpec
    queries: tuple[QueryPlan, ...]

    @property
    def measurements(self) -> tuple[Measurement, ...]:
        """Every measurement of every query, in query order."""
        return tuple(m for q in self.queries for m in q.measurements)

    @property
    def rho(self) -> float:
        """Total ρ of the release (the sum of the calibrated mechanisms' ρ, rounded up)."""
        return math.fsum(m.achieved_rho for m in self.measurements)

    @property
    def delta(self) -> float:
        """Total δ of the release (key discovery; 0 without): it is δ-approximately ρ-zCDP."""
        return math.fsum(m.delta for m in self.measurements)

    def mechanisms(self) -> list[Any]:
        """What every measurement spends (:attr:`Measurement.spend_item`), in order."""
        return [m.spend_item for m in self.measurements]

    def spend(self) -> Any:
        """The whole release as one item for the ledger: the composition of :meth:`mechanisms`."""
        items = self.mechanisms()
        if len(items) == 1 and not isinstance(items[0], tuple) and self.delta == 0.0:
            return items[0]
        from renyi.guarantees.composition import compose

        return compose(*items)


def _calibrate(noise: str, sens: Sensitivity, rho: float) -> Any:
    from renyi.guarantees import ZCDP
    from renyi.mechanisms import DiscreteGaussian, DiscreteLaplace

    if sens.l1 == 0.0:
        # Nothing can move the vector (e.g. bounds within one granularity unit): calibrate as
        # for sensitivity 1, an upper bound, so the mechanism still spends no more than its share.
        sens = Sensitivity(1.0, 1.0, 1, sens.rows, sens.groups, sens.rows_per_group)
    from renyi.accounting.calibration import calibrate
    from renyi.core.errors import DomainError

    guess = sens.l2 / math.sqrt(2.0 * rho)
    try:
        if noise == "discrete_gaussian":
            # ρ = Δ₂²/(2σ²) for independent discrete Gaussian noise per cell ([CKS20] Prop. 5 and
            # additivity of Rényi divergences over independent coordinates): σ = Δ₂/√(2ρ) in closed
            # form, stepped up until the mechanism's own ρ is within the share (no solver: the
            # solver's import was most of a release's fixed cost).
            sigma = guess
            for _ in range(64):
                mech = DiscreteGaussian(sigma, sens.l2, vector=True)
                if float(mech.guarantee.to_zcdp().rho) <= rho:
                    return mech
                sigma = math.nextafter(sigma * (1.0 + 4e-16), math.inf)
            c = calibrate(lambda s: DiscreteGaussian(s, sens.l2, vector=True), ZCDP(rho),
                          bounds=(guess * 0.5, guess * 2.0))
            return DiscreteGaussian(c.value, sens.l2, vector=True)
        # Discrete Laplace on the ℓ₁ sensitivity is ε = Δ₁/t pure DP, hence ε·tanh(ε/2)-zCDP.
        guess = sens.l1 / math.sqrt(2.0 * rho)
        c = calibrate(lambda t: DiscreteLaplace(t, int(sens.l1), vector=True), ZCDP(rho),
                      bounds=(guess * 0.25, guess * 4.0))
        return DiscreteLaplace(c.value, int(sens.l1), vector=True)
    except DomainError:
        if math.isfinite(guess) and guess < 1e150:
            raise
        # the sensitivity (max_rows_per_unit = 1e308, say) needs noise beyond what floats hold
        raise SpecError(f"a sensitivity of ℓ₁ = {sens.l1:.6g}, ℓ₂ = {sens.l2:.6g} ({sens.rows:.6g} rows per individual) "
                        f"at ρ = {rho:.6g} needs noise of scale {guess:.3g}, beyond what can be calibrated; bound the "
                        "rows per individual (max_rows_per_unit) or the values far lower", name="max_rows_per_unit",
                        value=sens.rows) from None


def _half_width(mechanism: Any, coverage: float) -> int:
    from renyi.accounting import accuracy

    return int(math.ceil(accuracy.half_width(mechanism, coverage=coverage, cells=1)))


def mean_coverage(coverage: float = COVERAGE, parts: int = 2) -> float:
    """Coverage of each of the ``parts`` intervals behind a ratio's interval (union bound)."""
    return 1.0 - (1.0 - coverage) / parts


def centring(lower: float, upper: float, granularity: float) -> tuple[int, int]:
    """The centre c and the per-row bound B of centred values, in granularity units.

    The engine sums v = round(clamp(x, lower, upper)/granularity); rounding is monotone, so
    v ∈ [L, H] with L = ⌊lower/g⌋ and H = ⌈upper/g⌉. With the integer c = ⌊(L + H)/2⌋, one row
    moves Σ(v − c) by at most B = max(H − c, c − L) = ⌈(H − L)/2⌉, about half of the
    max(|L|, |H|) of an uncentred sum when the range is far from 0 (for [0, 200000]: 100000
    instead of 200000). A count released beside it gives the sum back exactly as
    Σ(v − c) + c·count, so a mean Σv/count = Σ(v − c)/count + c carries half the noise.

        >>> centring(0.0, 200000.0, 1.0)
        (100000, 100000)
        >>> centring(-3.0, 10.0, 0.5)
        (7, 13)
    """
    lo_u, hi_u = math.floor(lower / granularity), math.ceil(upper / granularity)
    c = (lo_u + hi_u) // 2
    return c, max(hi_u - c, c - lo_u)


def levels(by: tuple[str, ...], keys: tuple[tuple[str, ...], ...]) -> list[tuple[tuple[str, ...],
                                                                                  tuple[tuple[str, ...], ...]]]:
    """The levels of a ``consistent`` query, coarsest first: (by[:i], the distinct key prefixes).

    The coarser keys are derived from the public key list (first appearance order), never from
    the data.

        >>> levels(("s", "c"), (("a", "1"), ("a", "2"), ("b", "1")))
        [((), ((),)), (('s',), (('a',), ('b',))), (('s', 'c'), (('a', '1'), ('a', '2'), ('b', '1')))]
    """
    out = []
    for i in range(len(by) + 1):
        seen: dict[tuple[str, ...], None] = {}
        for k in keys:
            seen.setdefault(k[:i], None)
        out.append((by[:i], tuple(seen)))
    return out


def _sum_bound(q: QuerySpec) -> int:
    assert q.bounds is not None
    return math.ceil(max(abs(q.bounds[0]), abs(q.bounds[1])) / q.granularity)


def _parts(q: QuerySpec, m: int) -> list[dict[str, Any]]:
    """The measurements of a query before budgeting: kind, sensitivity, unit, share, centre, shift.

    A query with discovered keys first spends ``discovery_share`` of its ρ on finding them
    (one ``"discovery"`` measurement: the number of people per group, each person counted once
    in each of at most ``max_groups_per_unit`` groups); its other measurements share the rest.
    """
    base = _value_parts(q, m)
    if not q.discover:
        return base
    g = derive_sensitivity(m, q.max_groups_per_unit, 1, UNBOUNDED_CELLS)
    rest = 1.0 - q.discovery_share
    return [dict(kind="discovery", sens=g, unit=1.0, share=q.discovery_share, cells=0),
            *(dict(p, share=p["share"] * rest) for p in base)]


def _value_parts(q: QuerySpec, m: int) -> list[dict[str, Any]]:
    g, r = q.max_groups_per_unit, q.max_rows_per_group
    cells = UNBOUNDED_CELLS if q.discover else q.cells
    cnt = derive_sensitivity(m, g, r, cells)
    base: list[dict[str, Any]]
    if q.type == "quantile":
        # per quantile: the point (half of its share) and the two ends of its interval
        assert q.quantiles is not None
        k = len(q.quantiles)
        base = []
        for qq in q.quantiles:
            base += [dict(kind="quantile", sens=cnt, unit=1.0, share=0.5 / k, cells=q.cells, quantile=qq),
                     dict(kind="quantile_lower", sens=cnt, unit=1.0, share=0.25 / k, cells=q.cells, quantile=qq),
                     dict(kind="quantile_upper", sens=cnt, unit=1.0, share=0.25 / k, cells=q.cells, quantile=qq)]
        return base
    if q.type in ("count", "histogram"):
        base = [dict(kind="count", sens=cnt, unit=1.0, share=1.0, cells=q.released_cells)]
    elif q.type == "count_distinct":
        # one individual adds at most min(rows in the group, k) new values to a group
        k = min(cnt.rows_per_group, q.max_distinct_per_unit or m)
        base = [dict(kind="distinct", sens=derive_sensitivity(m, g, k, cells), unit=1.0, share=1.0, cells=cells)]
    elif q.type == "sum":
        base = [dict(kind="sum", sens=derive_sensitivity(m, g, r, cells, _sum_bound(q)), unit=q.granularity,
                     share=1.0, cells=cells)]
    else:
        assert q.bounds is not None
        c, b = centring(q.bounds[0], q.bounds[1], q.granularity)
        s_sens = derive_sensitivity(m, g, r, cells, b)
        if q.type == "mean":
            base = [dict(kind="sum", sens=s_sens, unit=q.granularity, share=q.mean_sum_share, cells=cells, centre=c),
                    dict(kind="count", sens=cnt, unit=1.0, share=1.0 - q.mean_sum_share, cells=cells)]
        else:
            shift = (b * b) // 2
            s2 = derive_sensitivity(m, g, r, cells, b * b - shift)
            base = [dict(kind="sum2", sens=s2, unit=q.granularity**2, share=1.0 / 3.0, cells=cells, centre=c,
                         shift=shift),
                    dict(kind="sum", sens=s_sens, unit=q.granularity, share=1.0 / 3.0, cells=cells, centre=c),
                    dict(kind="count", sens=cnt, unit=1.0, share=1.0 / 3.0, cells=cells)]
    for part in base:
        if not math.isfinite(part["sens"].l1):
            raise SpecError(f"query {q.name!r}: its sensitivity is beyond floating point (max_rows_per_unit = {m}"
                            f"{'' if q.bounds is None else f', bounds {list(q.bounds)}'}): bound the rows per "
                            "individual or the values far lower", name="max_rows_per_unit", value=m)
    if "consistent" not in q.post:
        return base
    cells = q.cells
    # one measurement per level, coarsest first; a coarse cell merges groups, so one individual
    # adds up to min(m, g·r) rows to it, in at most g cells (an upper bound on its ℓ₁/ℓ₂)
    (b0,) = base
    lv = levels(q.by, q.keys)
    out = []
    per_row = b0["sens"].per_row
    for cols, keys in lv[:-1]:
        rr = min(m, cnt.groups * cnt.rows_per_group)
        sens = derive_sensitivity(m, cnt.groups, rr, len(keys), per_row)
        out.append(dict(b0, sens=sens, share=1.0 / len(lv), cells=len(keys), level=cols, keys=keys))
    out.append(dict(b0, share=1.0 / len(lv)))
    return out


def _mechanism_for_target(noise: str, sens: Sensitivity, half_width: float, coverage: float) -> Any:
    """The least noise whose per-cell interval at ``coverage`` is at most ``half_width`` (noise units)."""
    from renyi.accounting.accuracy import noise_for
    from renyi.mechanisms import DiscreteGaussian, DiscreteLaplace

    if sens.l1 == 0.0:
        sens = Sensitivity(1.0, 1.0, 1, sens.rows, sens.groups, sens.rows_per_group)
    p = noise_for(half_width, coverage, 1, noise)
    if noise == "discrete_gaussian":
        return DiscreteGaussian(p, sens.l2, vector=True)
    return DiscreteLaplace(p, int(sens.l1), vector=True)


def _target_error(spec: ReleaseSpec, needs: list[tuple[QuerySpec, float]], avail: float, weighted: bool) -> str:
    over = [(q, r) for q, r in needs if r > avail]
    total = math.fsum(r for _, r in needs)
    what = "; ".join(f"query {q.name!r} needs ρ = {r:.6g} for ±{q.target.half_width:g} at "  # type: ignore[union-attr]
                     f"{q.target.coverage:g}" for q, r in needs)  # type: ignore[union-attr]
    if over:
        head = ", ".join(repr(q.name) for q, _ in over)
        return (f"privacy.budget: the target of {head} cannot be met within the budget ρ = {spec.rho:.6g} "
                f"({what})")
    more = " and leave some for the weighted queries" if weighted else ""
    return (f"privacy.budget: the targets together need ρ = {total:.6g}, more than the budget ρ = {spec.rho:.6g}"
            f"{more} ({what})")


def make_plan(spec: ReleaseSpec) -> Plan:
    """Split the budget, derive the sensitivities and calibrate the noise of every query.

    Queries with a target get the least noise meeting it (:func:`renyi.accuracy.noise_for`:
    the largest σ or scale whose per-cell interval at the target's coverage is at most the
    target half-width), hence the smallest ρ; the ρ's of independent measurements add, so
    their sum is the smallest total meeting every target. The rest of the budget is split by
    weight over the other queries; with no other query, only the targets' ρ is spent.

    Args:
        spec: a parsed spec (:func:`renyi.release.spec.parse_spec`).

    Returns:
        The :class:`Plan`; its total ρ is at most ``spec.rho``.

    Raises:
        SpecError: the targets cannot be met within the budget (naming the queries and the ρ
            each needs).
    """
    from renyi.release.spec import SpecError

    rho_avail = spec.rho * (1.0 - HOLD_BACK)
    m = spec.data.max_rows_per_unit
    planned: dict[int, QueryPlan] = {}
    needs: list[tuple[QuerySpec, float]] = []
    for i, q in enumerate(spec.queries):
        if q.target is None:
            continue
        meas = []
        for p in _parts(q, m):
            mech = _mechanism_for_target(q.noise, p["sens"], q.target.half_width / p["unit"], q.target.coverage)
            hw = _half_width(mech, q.target.coverage)
            meas.append(Measurement(q.name, p["kind"], float(mech.guarantee.to_zcdp().rho), p["sens"], mech,
                                    p["unit"], hw, p["cells"], q.target.coverage, p.get("centre", 0),
                                    p.get("shift", 0), p.get("level"), p.get("keys")))
        need = math.fsum(x.rho for x in meas)
        needs.append((q, need))
        planned[i] = QueryPlan(q, tuple(meas), need, need)
    weighted = [q for q in spec.queries if q.target is None]
    used = math.fsum(r for _, r in needs)
    left = rho_avail - used
    if needs and (left < 0.0 or (weighted and left <= 0.0)):
        raise SpecError(_target_error(spec, needs, rho_avail, bool(weighted)), name="budget", value=spec.rho)
    total_w = math.fsum(q.weight for q in weighted)
    out = []
    for i, q in enumerate(spec.queries):
        if i in planned:
            out.append(planned[i])
            continue
        rho_q = left * (q.weight / total_w)
        cov = q.target.coverage if q.target is not None else COVERAGE
        ps = _parts(q, m)
        if q.type in RATIO_TYPES:
            cov = mean_coverage(cov, sum(1 for p in ps if p["kind"] != "discovery"))
        meas = []
        for p in ps:
            r = rho_q * p["share"]
            if p["kind"] == "discovery":
                meas.append(_discovery_measurement(q, p, r))
                continue
            if p["kind"].startswith("quantile"):
                meas.append(_quantile_measurement(q, p, r, COVERAGE))
                continue
            mech = _calibrate(q.noise, p["sens"], r)
            meas.append(Measurement(q.name, p["kind"], r, p["sens"], mech, p["unit"], _half_width(mech, cov),
                                    p["cells"], cov, p.get("centre", 0), p.get("shift", 0), p.get("level"),
                                    p.get("keys")))
        out.append(QueryPlan(q, tuple(meas), rho_q))
    return Plan(spec, tuple(out))


def _quantile_measurement(q: QuerySpec, p: dict[str, Any], rho: float, coverage: float) -> Measurement:
    """One exponential mechanism per group over the public candidate grid.

    The score of a candidate c is u(c) = −dist(q·n, [L_c, R_c]) with L_c = #{v < c} and
    R_c = #{v ≤ c} over the group's kept, clamped values rounded to the grid: 0 exactly when c
    is a q-quantile. One row moves it by at most max(q, 1 − q) (see :mod:`renyi.release.noise`),
    so one person by Δ_u = r·max(q, 1 − q) with r rows in the group. The mechanism with
    η = ε/(2Δ_u) is ε-bounded-range, hence ε²/8-zCDP ([CR21] §3); one person
    touches at most g groups, so ``runs = g`` and ε = √(8ρ/g).

    The two ends of the interval are exponential mechanisms of the same kind on the group
    padded with s values at each bound (s = ``slack`` > t, t = log(K/(β/2))/η, K candidates):
    each misses its side with probability ≤ K·e^{−ηt} = β/2 ([DR14] Thm 3.11), whatever n.
    """
    from renyi.mechanisms import ExponentialMechanism

    sens: Sensitivity = p["sens"]
    qq = float(p["quantile"])
    du = sens.rows_per_group * max(qq, 1.0 - qq)
    runs = sens.groups
    eps = math.sqrt(8.0 * rho / runs) * (1.0 - 1e-12)
    mech = ExponentialMechanism(eps, du)
    slack = 0.0
    if p["kind"] != "quantile":
        k = len(q.candidates)
        t = math.log(k / ((1.0 - coverage) / 2.0)) / mech.eta
        slack = t + 0.5
    return Measurement(q.name, p["kind"], rho, sens, mech, 1.0, 0, p["cells"], coverage, runs=runs,
                       quantile=qq, slack=slack)


def _discovery_measurement(q: QuerySpec, p: dict[str, Any], rho: float) -> Measurement:
    """Gaussian thresholding: discrete Gaussian noise on the number of people per group, and a
    group is released when its noisy count reaches the threshold τ (:func:`discovery_threshold`)."""
    assert q.discovery_delta is not None
    sens: Sensitivity = p["sens"]
    mech = _calibrate("discrete_gaussian", sens, rho)
    delta = q.discovery_delta * (1.0 - HOLD_BACK)
    tau = discovery_threshold(float(mech.sigma), sens.groups, delta)
    return Measurement(q.name, "discovery", rho, sens, mech, 1.0, 0, 0, COVERAGE, delta=delta, threshold=tau)


def discovery_threshold(sigma: float, groups: int, delta: float) -> int:
    """The threshold τ of Gaussian thresholding: the least integer with 1 − (1 − p)^k ≤ δ,
    p = P[1 + Z ≥ τ] for Z ~ 𝒩_ℤ(0, σ²) and k = ``groups``.

    Why this δ: one person adds 1 to the count of at most k groups. Groups that also hold
    other people get a vector of counts that moves by ≤ √k in ℓ₂, so their noisy counts (and
    which of them reach τ) are (k/(2σ²))-zCDP ([CKS20] Prop. 5; thresholding is
    post-processing). The groups only that person has (at most k, count exactly 1) are
    released only if 1 + Z ≥ τ; conditioned on none of them being released, an event of
    probability ≥ (1 − p)^k, the output is that of the common groups. So thresholding is
    δ-approximately (k/(2σ²))-zCDP ([BS16] Def. 12) with δ = 1 − (1 − p)^k ≤ k·p.

    p is computed from the exact discrete Gaussian tail (an upper bound by at most
    round-off; :func:`renyi.accuracy.half_width` uses the same tail):

        >>> discovery_threshold(10.0, 1, 1e-6)
        50
    """
    from renyi.accounting.accuracy import _dg_log_tail

    def log_p(tau: int) -> float:  # log P[Z ≥ τ − 1] = log(½ P[|Z| > τ − 2])
        return _dg_log_tail(sigma, tau - 2) - math.log(2.0) if tau >= 2 else 0.0

    def ok(tau: int) -> bool:
        lp = log_p(tau)
        return -math.expm1(groups * math.log1p(-math.exp(lp))) <= delta if lp < 0.0 else False

    from scipy import special

    z = -float(special.ndtri(delta / (2.0 * groups)))
    tau = max(2, int(math.floor(1.0 + sigma * z)) - 2)
    while tau > 2 and ok(tau - 1):
        tau -= 1
    while not ok(tau):
        tau += 1
    return tau
