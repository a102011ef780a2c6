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

from renyi.release.spec import QuerySpec, ReleaseSpec

__all__ = ["Sensitivity", "Measurement", "QueryPlan", "Plan", "derive_sensitivity", "make_plan",
           "COVERAGE", "HOLD_BACK"]

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
    l2 = per_row * math.sqrt(full * r * r + rem * rem)
    return Sensitivity(float(l1), float(l2), per_row, rows, g, r)


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
        half_width: half-width of the per-cell 95 % interval, in noise units.
        cells: length of the vector.
    """

    query: str
    kind: str
    rho: float
    sensitivity: Sensitivity
    mechanism: Any
    unit: float
    half_width: int
    cells: int

    @property
    def achieved_rho(self) -> float:
        """ρ of the calibrated mechanism (≤ :attr:`rho`)."""
        return float(self.mechanism.guarantee.to_zcdp().rho)

    @property
    def noise_name(self) -> str:
        """The noise distribution in words ("discrete Gaussian" or "discrete Laplace")."""
        return "discrete Gaussian" if type(self.mechanism).__name__ == "DiscreteGaussian" else "discrete Laplace"

    @property
    def noise_parameter(self) -> tuple[str, float]:
        """(``"sigma"``, σ) or (``"scale"``, t), in noise units."""
        if type(self.mechanism).__name__ == "DiscreteGaussian":
            return "sigma", float(self.mechanism.sigma)
        return "scale", float(self.mechanism.scale)


@dataclass(frozen=True, slots=True)
class QueryPlan:
    """A query and its measurements (one for count and sum, two for mean)."""

    query: QuerySpec
    measurements: tuple[Measurement, ...]
    rho: float

    @property
    def half_width(self) -> float | None:
        """Per-cell 95 % half-width in output units (None for a mean: it depends on the count)."""
        if self.query.type == "mean":
            return None
        m = self.measurements[0]
        return m.half_width * m.unit


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

    def mechanisms(self) -> list[Any]:
        """The mechanism of every measurement (what the release spends), in order."""
        return [m.mechanism for m in self.measurements]


def _calibrate(noise: str, sens: Sensitivity, rho: float) -> Any:
    from renyi.accounting.calibration import calibrate
    from renyi.guarantees import ZCDP
    from renyi.mechanisms import DiscreteGaussian, DiscreteLaplace

    if sens.l1 == 0.0:
        # Nothing can move the vector (bounds [0, 0]): any noise is private; use unit noise.
        return DiscreteGaussian(1, 1.0, vector=True) if noise == "discrete_gaussian" else \
            DiscreteLaplace(1, 1, vector=True)
    if noise == "discrete_gaussian":
        # ρ = Δ₂²/(2σ²) for independent discrete Gaussian noise per cell ([CKS20] Prop. 5 and
        # additivity of Rényi divergences over independent coordinates).
        guess = sens.l2 / math.sqrt(2.0 * rho)
        c = calibrate(lambda s: DiscreteGaussian(s, sens.l2, vector=True), ZCDP(rho),
                      bounds=(guess * 0.5, guess * 2.0))
        return DiscreteGaussian(c.value, sens.l2, vector=True)
    # Discrete Laplace on the ℓ₁ sensitivity is ε = Δ₁/t pure DP, hence ε·tanh(ε/2)-zCDP.
    guess = sens.l1 / math.sqrt(2.0 * rho)
    c = calibrate(lambda t: DiscreteLaplace(t, int(sens.l1), vector=True), ZCDP(rho),
                  bounds=(guess * 0.25, guess * 4.0))
    return DiscreteLaplace(c.value, int(sens.l1), vector=True)


def _half_width(mechanism: Any, coverage: float) -> int:
    from renyi.accounting import accuracy

    return int(math.ceil(accuracy.half_width(mechanism, coverage=coverage, cells=1)))


def mean_coverage() -> float:
    """Coverage of each of the sum and count intervals behind a mean's interval (union bound)."""
    return 1.0 - (1.0 - COVERAGE) / 2.0


def make_plan(spec: ReleaseSpec) -> Plan:
    """Split the budget, derive the sensitivities and calibrate the noise of every query.

    Args:
        spec: a parsed spec (:func:`renyi.release.spec.parse_spec`).

    Returns:
        The :class:`Plan`; its total ρ is at most ``spec.rho``.
    """
    total_w = math.fsum(q.weight for q in spec.queries)
    rho_avail = spec.rho * (1.0 - HOLD_BACK)
    m = spec.data.max_rows_per_unit
    out = []
    for q in spec.queries:
        rho_q = rho_avail * (q.weight / total_w)
        cnt = derive_sensitivity(m, q.max_groups_per_unit, q.max_rows_per_group, q.cells)
        meas: list[Measurement] = []
        cov = mean_coverage() if q.type == "mean" else COVERAGE
        parts: list[tuple[str, float]]
        if q.type == "count":
            parts = [("count", rho_q)]
        elif q.type == "sum":
            parts = [("sum", rho_q)]
        else:
            parts = [("sum", rho_q * q.mean_sum_share), ("count", rho_q * (1.0 - q.mean_sum_share))]
        for kind, r in parts:
            if kind == "count":
                sens, unit = cnt, 1.0
            else:
                assert q.bounds is not None
                per_row = math.ceil(max(abs(q.bounds[0]), abs(q.bounds[1])) / q.granularity)
                sens = derive_sensitivity(m, q.max_groups_per_unit, q.max_rows_per_group, q.cells, per_row)
                unit = q.granularity
            mech = _calibrate(q.noise, sens, r)
            meas.append(Measurement(q.name, kind, r, sens, mech, unit, _half_width(mech, cov), q.cells))
        out.append(QueryPlan(q, tuple(meas), rho_q))
    return Plan(spec, tuple(out))
