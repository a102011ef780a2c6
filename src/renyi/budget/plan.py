"""Declared plans: a sequence of mechanisms fixed before any spend, billed once at its
certified (ε, δ) (``Accountant(budget, plan=...)``).

Why plans exist. An :class:`~renyi.accountant.Accountant` enforces an (ε, δ) budget with an
RDP filter, which stays valid when every spend (the mechanism *and* its parameters) is chosen
from earlier outputs. The price is the RDP-to-(ε, δ) conversion: on the shipped DP-SGD example
the filter needs ε = 3.08 where the privacy loss distribution (PLD) of the same fixed
sequence gives 2.38. That gap cannot be closed by an adaptive PLD filter: composing
trade-off curves (or PLDs) and stopping when the budget is crossed is **not** a valid filter
under full adaptivity ([KTH26], arXiv:2602.06756: an analyst who picks later mechanisms from
earlier outputs can exceed the stated (ε, δ)). It can be closed where the sequence really is
fixed in advance, which is most DP-SGD: the schedule (σ, q, steps per phase) is declared
before the data is touched, and nothing about it depends on the data.

**The rule.** A plan is an ordered list of phases ``(mechanism, count)``, declared when the
ledger is created. The accountant

1. bills the whole plan at creation at ε_P = the smallest certified upper bound on its ε at
   δ_P = ``plan_delta`` over the accounting routes of :mod:`renyi.routes` (the PLD route's
   upper end for DP-SGD; every route is valid for a sequence fixed in advance), and refuses
   the plan, recording nothing, when ε_P > ε;
2. records a spend that *follows the plan* — the mechanism of the current phase, or of a later
   one (the phases in between end early), within that phase's remaining count — at no further
   cost;
3. bills every other spend ("off the plan") through the (ε, δ) filter of the accountant on
   what the plan left: ε_O = ε − ε_P and δ_O = δ − δ_P (of which ``approx_delta`` is kept for
   approximate spends). With the default ``plan_delta`` (all of δ not kept for approximate
   spends) nothing is left for that filter's RDP part, so such spends are refused with a
   :class:`~renyi.errors.ConversionError` and nothing is recorded; declare
   ``plan_delta < δ`` to leave room for them.

Stopping early is allowed and stated (:class:`PlanStatus`): the plan stays billed at ε_P, which
is what a stopping rule that looks at the outputs requires.

**Why the rule is valid** (the whole run is (ε, δ)-DP):

* *The plan's steps* form an interactive mechanism P that answers each query with the next
  declared mechanism: the queries (e.g. the gradients) may depend on anything seen so far, but
  each step's mechanism and parameters are fixed. The composition theorem for dominating pairs
  under adaptive composition ([ZDW22] Thm 10) — and likewise the RDP, zCDP and GDP composition
  theorems behind the other routes — bounds P by the composition of the fixed sequence, so P is
  (ε_P, δ_P)-DP. Ending a phase early or skipping to a later phase is simulated by an analyst
  who asks the skipped steps on a constant query and ignores the answers: post-processing.
* *The spends off the plan* form an interactive mechanism O governed by the (ε_O, δ_O) filter,
  which is (ε_O, δ_O)-DP under fully adaptive choices (the filter's own theorem, see
  :class:`~renyi.accountant.Accountant`).
* The run interleaves P and O as the analyst likes: a *concurrent composition* of two
  interactive mechanisms. Concurrent composition of interactive (ε_i, δ_i)-DP mechanisms obeys
  every composition theorem of non-interactive ones ([Lyu22] for (ε, δ)-DP; [VZ23] Thm 1.3 for
  f-DP, which contains it), in particular basic composition: (ε_P + ε_O, δ_P + δ_O)-DP.
  ε_O and δ_O are computed rounded down, so ε_P + ε_O ≤ ε and δ_P + δ_O ≤ δ exactly.

What the plan does not allow: choosing the plan itself, or the order of its phases, from the
data (a plan is declared before any spend), and an adaptive PLD filter (above). A spend whose
mechanism equals a plan phase's but arrives after that phase (or with more steps than it has
left) is off the plan.

References:
    [ZDW22] Y. Zhu, J. Dong, Y.-X. Wang, Optimal Accounting of Differential Privacy via
        Characteristic Function, AISTATS 2022, Thm 10 (adaptive composition of dominating pairs).
    [Lyu22] X. Lyu, Composition Theorems for Interactive Differential Privacy, NeurIPS 2022.
    [VZ23] S. Vadhan, W. Zhang, Concurrent Composition Theorems for Differential Privacy,
        STOC 2023 (arXiv:2207.08335), Thm 1.3.
    [KTH26] A. Koskela et al., arXiv:2602.06756 (2026): no adaptive PLD filter.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from renyi.core.errors import ConversionError, DomainError, LedgerError, NeighbouringError
from renyi.guarantees import neighbouring as nbr
from renyi.guarantees.base import Conversion
from renyi.guarantees.composition import route_items

__all__ = ["PlanPhase", "PlanStatus", "plan_items", "certify"]

@dataclass(frozen=True, slots=True)
class PlanPhase:
    """One phase of a declared plan, as the ledger stores it.

    Attributes:
        mechanism: ``repr`` of the phase's mechanism (None when a guarantee was declared).
        guarantee: the guarantee of one step, as JSON (the ledger's schema).
        curve: SHA-256 key of one step's RDP values on the ledger's grid (as stored for spends).
        count: the number of steps declared.
    """

    mechanism: str | None
    guarantee: dict[str, Any]
    curve: str
    count: int

    @property
    def key(self) -> str:
        """What a spend must match to follow this phase (mechanism, guarantee and curve)."""
        return phase_key(self.mechanism, self.guarantee, self.curve)

    def to_json(self) -> dict[str, Any]:
        """The phase as stored in the ledger header."""
        return {"mechanism": self.mechanism, "guarantee": self.guarantee, "curve": self.curve, "count": self.count}

    @classmethod
    def from_json(cls, obj: Any) -> PlanPhase:
        """The phase :meth:`to_json` wrote.

        Raises:
            LedgerError: a malformed phase.
        """
        try:
            mech = obj["mechanism"]
            g = obj["guarantee"]
            curve = obj["curve"]
            count = obj["count"]
        except (KeyError, TypeError) as exc:
            raise LedgerError(f"malformed plan phase in ledger header: {obj!r:.200} ({exc})") from None
        if (mech is not None and not isinstance(mech, str)) or not isinstance(g, dict) or not isinstance(curve, str) \
                or isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise LedgerError(f"malformed plan phase in ledger header: {obj!r:.200}")
        return cls(mech, g, curve, count)


def phase_key(mechanism: str | None, guarantee: dict[str, Any], curve: str) -> str:
    """A canonical text for (mechanism, guarantee, per-step curve): equal keys, equal steps.

    The guarantee's ``label`` is left out (a description, not a parameter), and a stored
    guarantee without ``neighbouring`` is read under the default relation, as the ledger does.
    """
    g = {k: v for k, v in guarantee.items() if k not in ("label", "plan_phase")}
    g.setdefault("neighbouring", nbr.DEFAULT)
    return json.dumps([mechanism, g, curve], sort_keys=True, separators=(",", ":"), allow_nan=False)


def plan_items(plan: Any, relation: str) -> tuple[tuple[Any, int], ...]:
    """The ``(mechanism or guarantee, count)`` phases of ``plan``, in order.

    ``plan`` is a mechanism or guarantee (one step), a ``(mechanism, count)`` pair, a composed
    guarantee (:func:`renyi.compose`; its items in order), or a list of these. Consecutive equal
    phases are merged.

    Raises:
        DomainError: ``plan`` is not a composition of mechanisms or guarantees, or is empty.
        NeighbouringError: a phase is stated under another neighbouring relation than
            ``relation`` (the accountant's): a plan is billed under the relation it is
            declared under, never restated silently.
    """
    what = ("a plan must be a mechanism, a guarantee, a (mechanism, count) pair, a composition "
            "(renyi.compose) or a list of these")
    if isinstance(plan, (str, bytes, dict)) or plan is None:
        raise DomainError(f"{what}; got {type(plan).__name__} {plan!r:.80}", name="plan", value=plan)
    try:
        flat = route_items((plan,)) if not isinstance(plan, list) else route_items(tuple(plan))
    except TypeError as exc:
        raise DomainError(f"{what}; got {plan!r:.120} ({exc})", name="plan", value=plan) from None
    except DomainError as exc:  # a bad count
        raise DomainError(f"{what}, each count an integer in [1, inf); got {plan!r:.120} ({exc})",
                          name="plan", value=plan) from None
    if not flat:
        raise DomainError(f"{what}; got an empty plan", name="plan", value=plan)
    bad = [o for o, _ in flat if nbr.relation_of(o) != relation]
    if bad:
        raise NeighbouringError(
            f"plan: {', '.join(repr(o)[:80] for o in bad[:3])} {'is' if len(bad) == 1 else 'are'} stated under "
            f"{nbr.words(nbr.relation_of(bad[0]))} neighbours, the accountant under {nbr.words(relation)}; "
            f"declare the plan under {nbr.words(relation)} neighbours (a plan is billed as declared, never "
            "restated)", name="plan", value=tuple(bad))
    merged: list[tuple[Any, int]] = []
    for o, k in flat:
        if merged and _same(merged[-1][0], o):
            merged[-1] = (merged[-1][0], merged[-1][1] + k)
        else:
            merged.append((o, k))
    return tuple(merged)


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    try:
        return bool(type(a) is type(b) and a == b)
    except Exception:  # noqa: BLE001 - an item whose equality fails is simply not merged
        return False


def certify(items: Sequence[tuple[Any, int]], delta: float) -> Conversion:
    """The smallest certified upper bound on the plan's ε at ``delta`` (all routes).

    Every route of :mod:`renyi.routes` is valid for a sequence fixed in advance; for DP-SGD the
    PLD route's upper end is usually the smallest, and its ``lower`` end brackets the truth.

    Raises:
        ConversionError: no route gives a finite ε for the plan at ``delta``.
    """
    from renyi.accounting.routes import best_epsilon

    c = best_epsilon(list(items), delta)
    if not math.isfinite(c.value):
        raise ConversionError(f"the plan has no finite ε at δ = {delta!r}: {c.detail}")
    return c


@dataclass(frozen=True, slots=True)
class PlanStatus:
    """A declared plan and how far the run has followed it (``Accountant.plan``).

    Attributes:
        phases: the declared phases, in order.
        used: steps recorded on the plan, per phase.
        epsilon: ε_P, the plan's bill (a certified upper bound on its ε at ``delta``).
        delta: δ_P, the δ the plan is billed at.
        lower: a lower bound on the plan's true ε at ``delta`` when the route brackets it.
        method: the route that certified ``epsilon`` (e.g. ``"pld"``).
        current: the index of the phase the run is in (the last one with a recorded step;
            0 before the first).
        ahead: steps recorded ahead (``plan_reserve``) that this accountant has not yet
            handed out: counted in ``used``, not yet run.
    """

    phases: tuple[PlanPhase, ...]
    used: tuple[int, ...]
    epsilon: float
    delta: float
    lower: float | None
    method: str
    current: int = 0
    ahead: int = 0

    @property
    def steps(self) -> int:
        """The number of steps declared."""
        return sum(p.count for p in self.phases)

    @property
    def steps_run(self) -> int:
        """The number of steps recorded on the plan."""
        return sum(self.used)

    @property
    def finished(self) -> bool:
        """Whether every declared step was recorded."""
        return all(u == p.count for u, p in zip(self.used, self.phases))

    @property
    def stopped_early(self) -> tuple[int, ...]:
        """Indices of the phases that ended before their count (the run moved past them)."""
        return tuple(i for i in range(self.current) if self.used[i] < self.phases[i].count)

    def describe(self) -> str:
        """One paragraph: the bill, the progress, and what stopping early means."""
        how = f"{self.method}" + ("" if self.lower is None else f", true ε ≥ {self.lower:.6g}")
        text = (f"plan of {len(self.phases)} phase(s), {self.steps} step(s), billed at ε = {self.epsilon!r} "
                f"at δ = {self.delta!r} ({how}); {self.steps_run} of {self.steps} step(s) run")
        if self.ahead:
            text += f" ({self.ahead} of them recorded ahead, not yet run)"
        early = self.stopped_early
        if early:
            text += f"; phase(s) {', '.join(str(i + 1) for i in early)} stopped early"
        if not self.finished:
            text += ("; stopping before the end is allowed: the plan stays billed at its full ε "
                     "(a stopping rule that reads the outputs is post-processing of the whole plan)")
        return text

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly summary."""
        return {
            "phases": [dict(p.to_json(), used=u) for p, u in zip(self.phases, self.used)],
            "epsilon": self.epsilon, "delta": self.delta, "lower": self.lower, "method": self.method,
            "steps": self.steps, "steps_run": self.steps_run, "finished": self.finished,
            "stopped_early": list(self.stopped_early), "ahead": self.ahead,
        }


@dataclass(frozen=True)
class PlanSpec:
    """The plan as stored in a ledger header (internal)."""

    phases: tuple[PlanPhase, ...]
    epsilon: float
    delta: float
    lower: float | None
    method: str
    detail: str

    @functools.cached_property
    def keys(self) -> tuple[str, ...]:
        """The phases' keys (:func:`phase_key`), computed once."""
        return tuple(p.key for p in self.phases)

    def to_json(self) -> dict[str, Any]:
        from renyi.budget.ledger import encode_floats

        return {
            "phases": [p.to_json() for p in self.phases],
            "epsilon": encode_floats([self.epsilon])[0],
            "delta": self.delta,
            "lower": None if self.lower is None else encode_floats([self.lower])[0],
            "method": self.method,
            "detail": self.detail,
        }

    @classmethod
    def from_json(cls, obj: Any) -> PlanSpec:
        from renyi.budget.ledger import decode_floats

        try:
            phases = tuple(PlanPhase.from_json(p) for p in obj["phases"])
            eps = float(decode_floats([obj["epsilon"]])[0])
            delta = obj["delta"]
            lower = obj.get("lower")
            lo = None if lower is None else float(decode_floats([lower])[0])
            method = str(obj.get("method", ""))
            detail = str(obj.get("detail", ""))
        except (KeyError, TypeError, ValueError) as exc:
            raise LedgerError(f"malformed plan in ledger header: {exc}") from None
        if not phases or isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0.0 < delta < 1.0 \
                or not (eps >= 0.0) or math.isnan(eps):
            raise LedgerError(f"malformed plan in ledger header: {obj!r:.200}")
        return cls(phases, eps, float(delta), lo, method, detail)


@dataclass(frozen=True, slots=True)
class Cursor:
    """How far the recorded spends have followed the plan: the current phase and its used
    steps, and the used steps of every phase (internal)."""

    phase: int
    used: tuple[int, ...]

    @classmethod
    def start(cls, n: int) -> Cursor:
        return cls(0, (0,) * n)

    def match(self, spec: PlanSpec, key: str, count: int) -> int | None:
        """The phase a spend of ``count`` steps with ``key`` follows, or None (off the plan):
        the first phase at or after the current one with that key and ``count`` steps left."""
        keys = spec.keys
        for j in range(self.phase, len(keys)):
            if keys[j] == key and spec.phases[j].count - self.used[j] >= count:
                return j
        return None

    def advance(self, j: int, count: int) -> Cursor:
        used = list(self.used)
        used[j] += count
        return Cursor(j, tuple(used))
