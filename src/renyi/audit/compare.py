"""The audit beside the accounting: empirical lower bounds next to the certified upper bound.

:func:`audit` runs the chosen methods on one set of canary scores and, for a declared event (a
pipeline file, a mechanism or a composition), puts renyi's certified ε at the same δ next to
them, with renyi's own lower bound on the event's true ε (the PLD route's bracket, or the exact
value). The three numbers should read ``audit ≤ renyi lower ≤ renyi certified``; an audit above
the certified ε means the run did not do what was declared (or the accounting is wrong), up to
the audit's 1 − confidence chance of error.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from renyi.audit.bounds import METHODS, AuditResult, epsilon_lower_bound
from renyi.core._validation import PROBABILITY_OPEN
from renyi.core.errors import ConversionError, DomainError

__all__ = ["DESIGN_METHODS", "AuditReport", "audit", "read_scores"]

#: The experiment designs ``audit(design=...)`` knows, and the methods valid for each.
#: ``"one_run"``: one training run with many canaries, each included by its own fair coin: the
#: canaries share the model, so their scores are not independent trials, and only the one-run
#: audit [Steinke, Nasr & Jagielski 2023, Thm 3] is valid. ``"independent"``: one training run
#: per canary (independent trials): every method is valid (``one_run`` too, with less power).
DESIGN_METHODS: dict[str, tuple[str, ...]] = {
    "one_run": ("one_run",),
    "independent": METHODS,
}

_TRUE = {"1", "true", "yes", "y", "t", "in", "included"}
_FALSE = {"0", "false", "no", "n", "f", "out", "excluded"}


@dataclass(frozen=True, slots=True)
class AuditReport:
    """Lower bounds from an audit beside the certified ε of the declared event.

    Attributes:
        results: one :class:`~renyi.audit.AuditResult` per method run.
        delta: the δ of every number here.
        confidence: the audit's confidence 1 − β (each method's statement on its own).
        event: the declared event in words ("" when none was declared).
        certified: renyi's certified upper bound on the event's ε at ``delta`` (None without an
            event).
        certified_method: the accounting route that gave ``certified``.
        lower: renyi's lower bound on the event's true ε (the PLD bracket's lower end, or the
            exact value when the route is exact); None when no route brackets it.
        items: the event as ``(mechanism, count)`` pairs (for plots; not compared).
        design: the experiment design declared to :func:`audit` (``"one_run"`` or
            ``"independent"``), or "" when none was declared; each result's ``.design`` says
            which design its own guarantee needs.
    """

    results: tuple[AuditResult, ...]
    delta: float
    confidence: float
    event: str = ""
    certified: float | None = None
    certified_method: str = ""
    lower: float | None = None
    items: Any = field(default=None, compare=False, repr=False)
    design: str = ""

    def result(self, method: str) -> AuditResult:
        """The result of ``method``; KeyError if it was not run."""
        for r in self.results:
            if r.method == method:
                return r
        raise KeyError(method)

    def contradictions(self) -> tuple[str, ...]:
        """Methods whose lower bound exceeds the certified ε: evidence that the run is not the
        declared event (or that the accounting is wrong). Results that rest on an assumption
        (``"gdp"``'s Gaussian extrapolation) are left out: they contradict only that assumption."""
        if self.certified is None:
            return ()
        return tuple(r.method for r in self.results if not r.assumption and r.epsilon > self.certified)

    def to_dict(self) -> dict[str, Any]:
        """The report as one JSON-ready object (``inf`` as the string ``"inf"``)."""
        def j(x: float | None) -> Any:
            return "inf" if x is not None and math.isinf(x) else x
        return {"delta": self.delta, "confidence": self.confidence, "event": self.event,
                "certified": j(self.certified), "certified_method": self.certified_method,
                "lower": j(self.lower), "design": self.design, "results": [r.to_dict() for r in self.results],
                "contradictions": list(self.contradictions())}


def _event_items(event: Any) -> tuple[str, Any]:
    from renyi.pipeline import load_pipeline

    if isinstance(event, (str, os.PathLike)):
        p = load_pipeline(event)
        return (p.title or os.fspath(event)), p.aligned_items()
    return repr(event), event


def audit(scores: Any, included: Any, *, delta: float, confidence: float = 0.95,
          methods: Sequence[str] | None = None, event: Any = None, seed: int = 0,
          design: str | None = None) -> AuditReport:
    """Run the audit methods on one set of scores and compare with the declared event.

    Which methods are valid depends on how the canaries were run (``DESIGN_METHODS``):

    - ``design="one_run"`` — **one training run with many canaries**, each included by its own
      fair coin (the usual way to audit a model). The canaries share the model, so they are not
      independent trials: only ``"one_run"`` is valid, and it is the default.
    - ``design="independent"`` — one training run per canary (independent trials): all three
      methods are valid (the default runs all three).
    - ``design=None`` — not declared: the requested methods (default all three) are run, and
      each result's ``.design`` states the design its guarantee needs; ``"threshold"`` and
      ``"gdp"`` results from one run with many canaries prove nothing.

    Args:
        scores: one finite score per canary (higher = looks included).
        included: one boolean (or 0/1) per canary.
        delta: δ ∈ (0, 1) for every number reported.
        confidence: 1 − β ∈ (0, 1) of each method's statement.
        methods: a non-empty subset of ``("threshold", "one_run", "gdp")`` valid for
            ``design``; None for every method valid for it.
        event: what the run claims to be: a pipeline file (TOML/JSON path), a mechanism, a
            guarantee, or ``(item, count)`` pairs; None for the audit alone.
        seed: seed of the tie-breaking key.
        design: ``"one_run"``, ``"independent"`` or None (see above).

    Returns:
        An :class:`AuditReport`.

    Raises:
        DomainError: bad scores or parameters (see :func:`renyi.audit.epsilon_lower_bound`),
            an empty or unknown ``methods``, an unknown ``design`` or a method it does not
            allow, or a pipeline file that does not parse.

    Examples:
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> inc = rng.random(1000) < 0.5
        >>> rep = audit(rng.normal(size=1000) + inc, inc, delta=1e-5, design="one_run")
        >>> [r.method for r in rep.results]
        ['one_run']
        >>> audit(rng.normal(size=1000) + inc, inc, delta=1e-5, design="one_run", methods=["gdp"])
        Traceback (most recent call last):
        ...
        renyi.core.errors.DomainError: method 'gdp' needs independent trials (one training run per canary); design='one_run' (one training run with many canaries) allows only one_run
    """
    d = PROBABILITY_OPEN.check("delta", delta)
    conf = PROBABILITY_OPEN.check("confidence", confidence)
    if design is not None and design not in DESIGN_METHODS:
        raise DomainError(f"design must be one of {', '.join(DESIGN_METHODS)} or None; got {design!r}",
                          name="design", value=design)
    allowed = METHODS if design is None else DESIGN_METHODS[design]
    methods = allowed if methods is None else tuple(methods)
    if not methods or any(m not in METHODS for m in methods):
        raise DomainError(f"methods must be a non-empty subset of {', '.join(METHODS)}; got {methods!r}",
                          name="methods", value=methods)
    for m in methods:
        if m not in allowed:
            # only design="one_run" restricts: threshold and gdp count canaries as independent trials
            raise DomainError(f"method {m!r} needs independent trials (one training run per canary); "
                              f"design={design!r} (one training run with many canaries) allows only "
                              f"{', '.join(allowed)}", name="methods", value=m)
    results = tuple(epsilon_lower_bound(scores, included, delta=d, confidence=conf, method=m, seed=seed)
                    for m in methods)
    tag = design or ""
    if event is None:
        return AuditReport(results, d, conf, design=tag)
    from renyi.accounting.routes import best_epsilon

    name, items = _event_items(event)
    c = best_epsilon(items, d)
    lower = c.lower
    if lower is None and c.method == "exact":
        lower = c.value
    if lower is None:
        try:  # the PLD route brackets the truth even where another route certified less
            lower = best_epsilon(items, d, method="pld").lower
        except (ConversionError, DomainError):
            lower = None
    return AuditReport(results, d, conf, name, c.value, c.method, lower, items, tag)


def read_scores(path: str | os.PathLike[str], *, score_column: str = "score",
                included_column: str = "included") -> tuple[np.ndarray, np.ndarray]:
    """Read canary scores from a CSV file with a header row.

    Args:
        path: the CSV file; other columns are ignored.
        score_column: the column of scores (finite numbers).
        included_column: the column saying whether each canary was included: 1/0, true/false,
            yes/no, in/out (any case).

    Returns:
        ``(scores, included)`` as float64 and bool arrays.

    Raises:
        DomainError: a missing file or column, an empty file, or a value that does not parse
            (naming the line and the value).
    """
    where = os.fspath(path)
    try:
        with open(where, newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            cols = reader.fieldnames or []
            for col, opt in ((score_column, "--score-column"), (included_column, "--included-column")):
                if col not in cols:
                    raise DomainError(f"{where}: no column {col!r} (columns: {', '.join(cols) or 'none'}; "
                                      f"choose one with {opt})", name="path", value=where)
            scores: list[float] = []
            flags: list[bool] = []
            for row in reader:
                line = reader.line_num
                raw_s = (row.get(score_column) or "").strip()
                raw_i = (row.get(included_column) or "").strip().lower()
                try:
                    scores.append(float(raw_s))
                except ValueError:
                    raise DomainError(f"{where} line {line}: {score_column} must be a number; got {raw_s!r}",
                                      name=score_column, value=raw_s) from None
                if raw_i in _TRUE:
                    flags.append(True)
                elif raw_i in _FALSE:
                    flags.append(False)
                else:
                    raise DomainError(f"{where} line {line}: {included_column} must be 1/0, true/false, "
                                      f"yes/no or in/out; got {raw_i!r}", name=included_column, value=raw_i)
    except OSError as e:
        raise DomainError(f"cannot read scores from {where}: {e.strerror or e}", name="path", value=where) from None
    except UnicodeDecodeError:
        raise DomainError(f"{where} is not a UTF-8 text CSV file", name="path", value=where) from None
    if not scores:
        raise DomainError(f"{where} has no rows of scores", name="path", value=where)
    return np.asarray(scores, dtype=np.float64), np.asarray(flags, dtype=bool)
