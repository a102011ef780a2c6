"""Pipeline files: a privacy pipeline described in TOML (or JSON) for ``renyi report``.

A pipeline is a list of mechanisms, each run ``count`` times, possibly on a random subsample,
plus the δ at which ε is reported and an optional budget (format: ``docs/cli/report.md``)::

    [privacy]
    delta = 1e-5
    budget = { epsilon = 8.0, delta = 1e-5 }     # or { rho = 0.5 }

    [[mechanism]]
    name = "dp-sgd"
    type = "gaussian"
    sigma = 1.1
    sampling = { scheme = "poisson", rate = 0.004 }   # or batch_size + dataset_size
    count = 15000                                      # or epochs = 64 (count = epochs / rate)

This module only *parses*: every number is validated by the mechanism or guarantee it builds,
so a bad value gives the library's own :class:`~renyi.errors.DomainError` message, prefixed
with the mechanism's name. Every problem with a file is a :class:`PipelineError` whose message
is one readable line.

    >>> p = parse_pipeline({"privacy": {"delta": 1e-5},
    ...                     "mechanism": [{"name": "q", "type": "gaussian", "sigma": 2.0, "count": 3}]})
    >>> [(e.name, e.mechanism, e.count) for e in p.entries]
    [('q', Gaussian(sigma=2.0, sensitivity=1.0, neighbouring='add_remove'), 3)]
    >>> p.delta
    1e-05
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from renyi.core.errors import DomainError
from renyi.core._names import canonical_keywords

__all__ = [
    "PipelineError",
    "Pipeline",
    "Entry",
    "Budget",
    "Sampling",
    "MECHANISM_TYPES",
    "load_pipeline",
    "parse_pipeline",
    "build_mechanism",
]


class PipelineError(DomainError):
    """A pipeline file cannot be read or describes an invalid pipeline (one-line message)."""


# --------------------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Sampling:
    """How a mechanism's input is subsampled.

    Attributes:
        scheme: ``"poisson"`` (each record kept independently; add/remove neighbours) or
            ``"without_replacement"`` (fixed-size batches; replace-one neighbours).
        rate: the sampling rate q ∈ [0, 1].
        group_size: (Poisson sampling of a Gaussian) the unit is a person with up to this many
            examples; 1 is one example.
    """

    scheme: str
    rate: float
    steps: int | None = None
    k: int = 1
    max_batch: int | None = None
    dataset_size: int | None = None
    group_size: int = 1

    @property
    def assumption(self) -> str:
        """The sampling assumption in words, as printed in every report."""
        if self.scheme == "poisson" and self.group_size > 1:
            return (f"Poisson sampling of examples; unit: a person with up to {self.group_size} examples "
                    "(Binomial mixture), add/remove neighbours")
        if self.scheme == "poisson":
            return "Poisson sampling, add/remove neighbours"
        if self.scheme == "allocation":
            from renyi.sampling.allocation import THEOREM

            return (f"random allocation, k = {self.k} of t = {self.steps} steps per epoch (count = epochs), "
                    f"add/remove neighbours; {THEOREM}")
        if self.scheme == "truncated_poisson":
            return (f"truncated Poisson sampling (batch ≤ {self.max_batch}, n = {self.dataset_size}), add/remove "
                    "neighbours; Poisson curve + δ = P[Bin(n, q) ≥ cap]")
        if self.scheme == "shuffle":
            return (f"shuffled fixed batches, t = {self.steps} steps per epoch (count = epochs), replace-one "
                    "neighbours; no amplification claimed")
        return "sampling without replacement (fixed-size batches), replace-one neighbours"


@dataclass(frozen=True, slots=True)
class Entry:
    """One line of the pipeline: ``mechanism`` (subsampling already applied) run ``count`` times."""

    name: str
    type: str
    mechanism: Any
    count: int
    base: Any = None
    sampling: Sampling | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    #: length of the released vector (1: a scalar)
    cells: int = 1
    #: the cells partition the individuals (each in at most one): parallel composition
    disjoint: bool = False

    def __iter__(self) -> Iterator[Any]:
        """Unpack as ``(name, mechanism, count)``."""
        return iter((self.name, self.mechanism, self.count))

    @property
    def assumption(self) -> str:
        """The neighbouring/sampling assumption of this entry, in words."""
        if self.sampling is not None:
            return self.sampling.assumption
        neighbouring = getattr(self.mechanism, "neighbouring", None)
        if neighbouring == "replace_one":
            return "no subsampling, replace-one neighbours"
        if neighbouring == "add_remove":
            return "no subsampling, add/remove neighbours"
        return "no subsampling"


@dataclass(frozen=True, slots=True)
class Budget:
    """A privacy budget: (ε, δ) (``rho`` None) or ρ-zCDP (``epsilon`` None)."""

    epsilon: float | None = None
    delta: float | None = None
    rho: float | None = None


@dataclass(frozen=True, slots=True)
class Pipeline:
    """A parsed pipeline: its entries, the reporting δ and an optional budget.

    ``neighbouring`` is the relation of ``[privacy] neighbouring`` (the relation the total and
    the budget are stated under), or None when the file does not name one: then it is the
    entries' common relation, replace-one when they mix (see :meth:`relation`).
    """

    entries: tuple[Entry, ...]
    delta: float
    budget: Budget | None = None
    source: str = "<pipeline>"
    title: str = ""
    neighbouring: str | None = None

    def items(self) -> list[tuple[Any, int]]:
        """``[(mechanism, count), ...]``, ready for :func:`renyi.compose`."""
        return [(e.mechanism, e.count) for e in self.entries]

    def relation(self) -> str:
        """The neighbouring relation of the pipeline's total (and of its budget)."""
        from renyi.guarantees.neighbouring import common_relation

        return self.neighbouring or common_relation(self.items())

    def aligned_items(self) -> list[tuple[Any, int]]:
        """:meth:`items` stated under :meth:`relation` (add/remove items converted; see
        :mod:`renyi._neighbouring`).

        Raises:
            NeighbouringError: an item cannot be stated under the pipeline's relation.
        """
        from renyi.guarantees.neighbouring import align, to_relation, words
        from renyi.core.errors import NeighbouringError

        relation = self.relation()
        try:
            _, items = align(self.items(), relation)
        except NeighbouringError as exc:
            bad = []
            for e in self.entries:
                try:
                    to_relation(e.mechanism, relation)
                except NeighbouringError:
                    bad.append(repr(e.name))
            where = "privacy.neighbouring" if self.neighbouring else "the pipeline's relation"
            reason = str(exc).split(" neighbours: ", 1)[-1]
            raise NeighbouringError(
                f"{where} is {words(relation)}: mechanism {', '.join(bad)} cannot be stated under it: {reason}",
                name="neighbouring", value=exc.value) from None
        return list(items)

    def __iter__(self) -> Iterator[Entry]:
        """The entries, in file order."""
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)


# --------------------------------------------------------------------------------------
# Mechanism types
# --------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Param:
    kind: str  # "real" | "int" | "str" | "reals"
    required: bool = False


@dataclass(frozen=True, slots=True)
class _Spec:
    build: Callable[[dict[str, Any]], Any]
    params: dict[str, _Param]
    doc: str
    one_of: tuple[str, ...] = ()  # exactly one of these keys must be present


def _mech(family: str, cls: str) -> Callable[[dict[str, Any]], Any]:
    def build(kw: dict[str, Any]) -> Any:
        import importlib

        for module in ("renyi.mechanisms", f"renyi.mechanisms.{family}"):
            try:
                klass = getattr(importlib.import_module(module), cls)
                break
            except (ImportError, AttributeError):
                continue
        else:
            raise PipelineError(f"{cls} is not available in this version of renyi")
        return klass(**kw)

    return build


def _guarantee(cls: str) -> Callable[[dict[str, Any]], Any]:
    def build(kw: dict[str, Any]) -> Any:
        from renyi import guarantees as definitions

        return getattr(definitions, cls)(**kw)

    return build


def _randomized_response(kw: dict[str, Any]) -> Any:
    try:
        from renyi.mechanisms.randomized_response import RandomizedResponse
    except ImportError:
        raise PipelineError("RandomizedResponse is not available in this version of renyi") from None
    if "p" in kw:
        return RandomizedResponse.from_truth_probability(kw["p"], kw.get("k", 2))
    return RandomizedResponse(kw["epsilon"], kw.get("k", 2))


def _rdp_points(kw: dict[str, Any]) -> Any:
    from renyi.guarantees.neighbouring import DEFAULT, check_neighbouring, with_relation
    from renyi.guarantees import RDP

    nb = check_neighbouring(kw.get("neighbouring", DEFAULT))
    if "alpha" in kw:
        return with_relation(RDP.from_point(kw["alpha"], kw["epsilon"]), nb)
    if "orders" not in kw or "epsilons" not in kw:
        raise KeyError("orders")
    return with_relation(RDP.from_points(kw["orders"], kw["epsilons"]), nb)


_R, _RR = _Param("real"), _Param("real", required=True)
_NB = _Param("str")

#: Every mechanism type a pipeline may use, with its parameters.
MECHANISM_TYPES: dict[str, _Spec] = {
    "gaussian": _Spec(_mech("gaussian", "Gaussian"), {"sigma": _RR, "sensitivity": _R, "neighbouring": _NB},
                      "Gaussian noise, ℓ₂ sensitivity"),
    "laplace": _Spec(_mech("laplace", "Laplace"), {"scale": _RR, "sensitivity": _R, "neighbouring": _NB},
                     "Laplace noise, ℓ₁ sensitivity"),
    "randomized_response": _Spec(
        _randomized_response,
        {"epsilon": _R, "p": _R, "k": _Param("int")},
        "randomized response (binary or k-ary), by ε or by the truth probability p",
        one_of=("epsilon", "p"),
    ),
    "discrete_gaussian": _Spec(_mech("discrete_gaussian", "DiscreteGaussian"),
                               {"sigma": _RR, "sensitivity": _R, "neighbouring": _NB, "vector": _Param("bool")},
                               "discrete Gaussian on ℤ (CKS20)"),
    "discrete_laplace": _Spec(_mech("discrete_laplace", "DiscreteLaplace"),
                              {"scale": _RR, "sensitivity": _R, "neighbouring": _NB, "vector": _Param("bool")},
                              "discrete Laplace on ℤ"),
    "exponential": _Spec(_mech("exponential", "ExponentialMechanism"),
                         {"epsilon": _RR, "sensitivity": _R, "monotone": _Param("bool"), "neighbouring": _NB},
                         "exponential mechanism (selection); bounded range ε²/8-zCDP"),
    "pure_dp": _Spec(_guarantee("PureDP"), {"epsilon": _RR, "neighbouring": _NB}, "any ε-DP mechanism"),
    "approx_dp": _Spec(_guarantee("ApproxDP"), {"epsilon": _RR, "delta": _RR, "neighbouring": _NB},
                       "any (ε, δ)-DP mechanism (e.g. propose-test-release)"),
    "zcdp": _Spec(_guarantee("ZCDP"), {"rho": _RR, "xi": _R, "neighbouring": _NB}, "any ρ-zCDP mechanism"),
    "gdp": _Spec(_guarantee("GDP"), {"mu": _RR, "neighbouring": _NB}, "any μ-GDP mechanism"),
    "rdp": _Spec(_rdp_points, {"alpha": _R, "epsilon": _R, "orders": _Param("reals"), "epsilons": _Param("reals"),
                               "neighbouring": _NB},
                 "an RDP guarantee: one point (alpha, epsilon) or lists orders/epsilons"),
}

_COMMON_KEYS = ("name", "type", "count", "epochs", "sampling", "cells", "disjoint", "l2_sensitivity", "l1_sensitivity")
#: which declared vector sensitivity each noise-adding type takes
_VECTOR_NORM = {"gaussian": "l2_sensitivity", "discrete_gaussian": "l2_sensitivity",
                "laplace": "l1_sensitivity", "discrete_laplace": "l1_sensitivity"}
SAMPLING_SCHEMES = ("poisson", "without_replacement", "allocation", "truncated_poisson", "shuffle")


def _canon(word: str) -> str:
    return word.strip().lower().replace("-", "_").replace(" ", "_")


_ALIASES = {
    "exponential_mechanism": "exponential",
    "rr": "randomized_response",
    "pure": "pure_dp",
    "approx": "approx_dp",
    "approximate_dp": "approx_dp",
}


def _type_name(v: Any) -> str:
    return {str: "a string", bool: "a boolean", int: "an integer", float: "a number",
            list: "a list", dict: "a table"}.get(type(v), type(v).__name__)


def _check_type(where: str, key: str, value: Any, kind: str) -> Any:
    ok: bool
    if kind == "real":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        want = "a number"
    elif kind == "int":
        ok = isinstance(value, int) and not isinstance(value, bool) or (
            isinstance(value, float) and value.is_integer())
        want = "an integer"
    elif kind == "str":
        ok = isinstance(value, str)
        want = "a string"
    elif kind == "bool":
        ok = isinstance(value, bool)
        want = "true or false"
    else:  # reals
        ok = isinstance(value, list) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
        want = "a list of numbers"
    if not ok:
        raise PipelineError(f"{where}: {key} must be {want}; got {_type_name(value)} {value!r}")
    if kind == "int":
        return int(value)
    return value


def build_mechanism(type_: str, params: Mapping[str, Any], *, where: str = "mechanism") -> Any:
    """Build the mechanism (or guarantee) of one pipeline entry from its type and parameters.

    Raises:
        PipelineError: unknown type, unknown/missing key, wrong type or out-of-range value;
            the message starts with ``where``.
    """
    if not isinstance(type_, str):
        raise PipelineError(f"{where}: type must be a string; got {_type_name(type_)} {type_!r}")
    t = _canon(type_)
    t = _ALIASES.get(t, t)
    spec = MECHANISM_TYPES.get(t)
    if spec is None:
        known = ", ".join(MECHANISM_TYPES)
        raise PipelineError(f"{where}: unknown mechanism type {type_!r}; known types: {known}")
    try:  # `neighboring` (US spelling) is the same key as `neighbouring`
        params = canonical_keywords(dict(params), "mechanism")
    except TypeError:
        raise PipelineError(f"{where}: give neighbouring or neighboring, not both") from None
    kw: dict[str, Any] = {}
    for key, value in params.items():
        p = spec.params.get(key)
        if p is None:
            raise PipelineError(
                f"{where}: unknown key {key!r} for type {t!r}; expected one of: "
                f"{', '.join(list(spec.params) + list(_COMMON_KEYS))}")
        kw[key] = _check_type(where, key, value, p.kind)
    for key, p in spec.params.items():
        if p.required and key not in kw:
            raise PipelineError(f"{where}: missing required key {key!r} for type {t!r}")
    if spec.one_of and sum(k in kw for k in spec.one_of) != 1:
        raise PipelineError(f"{where}: give exactly one of {', '.join(map(repr, spec.one_of))} for type {t!r}")
    try:
        return spec.build(kw)
    except PipelineError as e:
        raise PipelineError(f"{where}: {e}") from None
    except KeyError as e:
        raise PipelineError(f"{where}: missing required key {e.args[0]!r} for type {t!r}") from None
    except (DomainError, TypeError, ValueError) as e:
        raise PipelineError(f"{where}: {e}") from None


def _apply_sampling(where: str, mech: Any, raw: Any) -> tuple[Any, Sampling]:
    if not isinstance(raw, Mapping):
        raise PipelineError(f"{where}: sampling must be a table like {{ scheme = \"poisson\", rate = 0.01 }}; "
                            f"got {_type_name(raw)} {raw!r}")
    allowed = ("scheme", "rate", "batch_size", "dataset_size", "steps", "k", "max_batch", "group_size")
    for key in raw:
        if key not in allowed:
            raise PipelineError(f"{where}: unknown sampling key {key!r}; expected one of: {', '.join(allowed)}")
    scheme = raw.get("scheme", "poisson")
    if not isinstance(scheme, str) or _canon(scheme) not in SAMPLING_SCHEMES:
        raise PipelineError(f"{where}: sampling scheme must be one of {', '.join(SAMPLING_SCHEMES)}; got {scheme!r}")
    scheme = _canon(scheme)
    group = 1
    if "group_size" in raw:
        if scheme != "poisson":
            raise PipelineError(f"{where}: sampling key 'group_size' is used by scheme 'poisson' only (the tight "
                                "user-level analysis is for Poisson sampling of examples)")
        group = int(_check_type(where, "sampling.group_size", raw["group_size"], "int"))
    if scheme in ("allocation", "shuffle", "truncated_poisson"):
        return _apply_sampler(where, mech, scheme, raw)
    for key in ("steps", "k", "max_batch"):
        if key in raw:
            raise PipelineError(f"{where}: sampling key {key!r} is not used by scheme {scheme!r}")
    if "rate" in raw:
        if "batch_size" in raw or "dataset_size" in raw:
            raise PipelineError(f"{where}: give the sampling rate or batch_size and dataset_size, not both")
        rate = _check_type(where, "sampling.rate", raw["rate"], "real")
    elif "batch_size" in raw and "dataset_size" in raw:
        b = _check_type(where, "sampling.batch_size", raw["batch_size"], "int")
        n = _check_type(where, "sampling.dataset_size", raw["dataset_size"], "int")
        if n < 1 or b < 0 or b > n:
            raise PipelineError(f"{where}: sampling needs 0 <= batch_size <= dataset_size and dataset_size >= 1; "
                                f"got batch_size={b}, dataset_size={n}")
        rate = b / n
    else:
        raise PipelineError(f"{where}: sampling needs a rate (or batch_size and dataset_size)")
    if not (0.0 <= float(rate) <= 1.0) or math.isnan(rate):
        raise PipelineError(f"{where}: sampling rate must be in [0, 1]; got {rate!r}")
    try:
        from renyi.sampling import subsampling
    except ImportError:
        raise PipelineError(f"{where}: subsampling is not available in this version of renyi") from None
    cls = subsampling.PoissonSubsampled if scheme == "poisson" else subsampling.SubsampledWithoutReplacement
    try:
        sub: Any = cls(mech, float(rate))
        if "group_size" in raw:
            n = raw.get("dataset_size")
            sub = subsampling.PoissonSubsampledGroup(mech, float(rate), group, None if n is None else int(n))
    except (DomainError, TypeError, ValueError) as e:
        raise PipelineError(f"{where}: {e}") from None
    return sub, Sampling(scheme, float(rate), group_size=group)


def _apply_sampler(where: str, mech: Any, scheme: str, raw: Mapping[str, Any]) -> tuple[Any, Sampling]:
    """Random allocation ({steps, k} or {rate} = k/t), shuffling ({steps}) and truncated Poisson
    ({rate, max_batch, dataset_size}); ``count`` is epochs for the first two, steps for the last."""
    from renyi.sampling import allocation, truncation

    def need_int(key: str) -> int:
        if key not in raw:
            raise PipelineError(f"{where}: sampling scheme {scheme!r} needs {key!r}")
        return int(_check_type(where, f"sampling.{key}", raw[key], "int"))

    try:
        if scheme == "truncated_poisson":
            rate = float(_check_type(where, "sampling.rate", raw.get("rate"), "real")) if "rate" in raw else None
            if rate is None:
                raise PipelineError(f"{where}: sampling scheme 'truncated_poisson' needs 'rate'")
            cap, n = need_int("max_batch"), need_int("dataset_size")
            return (truncation.TruncatedPoisson(mech, rate, cap, n),
                    Sampling(scheme, rate, max_batch=cap, dataset_size=n))
        k = int(_check_type(where, "sampling.k", raw["k"], "int")) if "k" in raw else 1
        if "steps" in raw:
            t = need_int("steps")
        elif "rate" in raw:
            rate = float(_check_type(where, "sampling.rate", raw["rate"], "real"))
            t = round(k / rate) if rate > 0 else 0
            if rate <= 0 or not math.isclose(k / t, rate, rel_tol=1e-9):
                raise PipelineError(f"{where}: sampling rate for {scheme!r} must be k/steps for a whole number of "
                                    f"steps; got {rate!r} (give steps = ... instead)")
        else:
            raise PipelineError(f"{where}: sampling scheme {scheme!r} needs 'steps' (steps per epoch)")
        if scheme == "shuffle":
            return allocation.Shuffled(mech, t), Sampling(scheme, 1.0 / t, steps=t)
        return allocation.RandomAllocation(mech, t, k), Sampling(scheme, k / t, steps=t, k=k)
    except (DomainError, TypeError, ValueError) as e:
        raise PipelineError(f"{where}: {e}") from None


def _parse_entry(i: int, raw: Any, seen: set[str]) -> Entry:
    if not isinstance(raw, Mapping):
        raise PipelineError(f"mechanism #{i}: must be a table ([[mechanism]]); got {_type_name(raw)}")
    name = raw.get("name", f"mechanism #{i}")
    if not isinstance(name, str) or not name.strip():
        raise PipelineError(f"mechanism #{i}: name must be a non-empty string; got {name!r}")
    where = f"mechanism {name!r}"
    if name in seen:
        raise PipelineError(f"{where}: duplicate name (each mechanism needs its own name)")
    seen.add(name)
    if "type" not in raw:
        raise PipelineError(f"{where}: missing required key 'type'; known types: {', '.join(MECHANISM_TYPES)}")
    type_ = raw["type"]
    count = _check_type(where, "count", raw.get("count", 1), "int")
    if count < 1:
        raise PipelineError(f"{where}: count must be an integer in [1, inf); got {count}")
    params = {k: v for k, v in raw.items() if k not in _COMMON_KEYS}
    t = _ALIASES.get(_canon(type_), _canon(type_)) if isinstance(type_, str) else type_
    cells, disjoint, build_params = _vector_release(where, t, raw, params)
    mech = build_mechanism(type_, build_params, where=where)
    base, sampling = mech, None
    if "sampling" in raw:
        mech, sampling = _apply_sampling(where, mech, raw["sampling"])
    if "epochs" in raw:
        count = _count_of_epochs(where, raw, sampling, count)
    return Entry(name=name, type=t, mechanism=mech, count=count, base=base, sampling=sampling, params=params,
                 cells=cells, disjoint=disjoint)


def _vector_release(where: str, t: Any, raw: Mapping[str, Any],
                    params: dict[str, Any]) -> tuple[int, bool, dict[str, Any]]:
    """Vector releases: ``cells`` with ``disjoint = true`` or a declared ℓ₂/ℓ₁ sensitivity.

    * ``disjoint = true``: the cells partition the individuals (each is in at most one), so
      the vector moves in one cell only, by the per-cell ``sensitivity``: the whole vector costs
      what one cell costs (parallel composition), for every mechanism type.
    * ``l2_sensitivity`` (Gaussian noise) / ``l1_sensitivity`` (Laplace noise): the declared
      sensitivity of the whole vector, used in place of ``sensitivity``; the release is
      accounted once.
    """
    cells = _check_type(where, "cells", raw.get("cells", 1), "int")
    if cells < 1:
        raise PipelineError(f"{where}: cells must be an integer in [1, inf); got {cells}")
    disjoint = _check_type(where, "disjoint", raw.get("disjoint", False), "bool")
    declared = [k for k in ("l2_sensitivity", "l1_sensitivity") if k in raw]
    out = dict(params)
    if len(declared) > 1:
        raise PipelineError(f"{where}: give l2_sensitivity or l1_sensitivity, not both")
    if declared:
        key = declared[0]
        if disjoint:
            raise PipelineError(f"{where}: {key} declares the whole vector's sensitivity; with disjoint = true "
                                "give the per-cell sensitivity instead")
        if "sensitivity" in params:
            raise PipelineError(f"{where}: give sensitivity (one cell) or {key} (the whole vector), not both")
        want = _VECTOR_NORM.get(t) if isinstance(t, str) else None
        if want is None:
            raise PipelineError(f"{where}: {key} is only for noise-adding types "
                                f"({', '.join(_VECTOR_NORM)}); got type {t!r}")
        if key != want:
            raise PipelineError(f"{where}: type {t!r} takes {want} (its noise is calibrated to that norm); got {key}")
        out["sensitivity"] = _check_type(where, key, raw[key], "real")
        if t.startswith("discrete_"):
            out["vector"] = True  # independent noise per coordinate: the scalar curve does not apply
    elif cells > 1 and not disjoint:
        raise PipelineError(f"{where}: cells = {cells} needs disjoint = true (each individual in one cell) or a "
                            "declared l2_sensitivity / l1_sensitivity; separate releases are count = ...")
    return cells, disjoint, out


def _count_of_epochs(where: str, raw: Mapping[str, Any], sampling: Sampling | None, count: int) -> int:
    """``epochs`` passes over the data at the sampling rate: epochs/q runs (rounded up; an exact
    fraction when the rate is batch_size/dataset_size). Must agree with ``count`` if both are given."""
    from renyi.accounting.dpsgd import schedule
    from renyi.core.errors import DomainError

    if sampling is None:
        raise PipelineError(f"{where}: epochs needs sampling (the number of runs is epochs / rate)")
    epochs = _check_type(where, "epochs", raw["epochs"], "real")
    if sampling.scheme in ("allocation", "shuffle"):
        # one mechanism of these schemes is one whole epoch; a partial epoch counts as a whole one
        n_epochs: int = max(1, math.ceil(float(epochs)))
        if "count" in raw and count != n_epochs:
            raise PipelineError(f"{where}: count = {count} and epochs = {epochs!r} do not add up (count is epochs "
                                f"for {sampling.scheme}); give one of them")
        return n_epochs
    samp = raw["sampling"]
    try:
        if "batch_size" in samp:
            sched = schedule(batch_size=samp["batch_size"], dataset_size=samp["dataset_size"], epochs=epochs)
        else:
            sched = schedule(sampling.rate, epochs=epochs)
    except DomainError as exc:
        raise PipelineError(f"{where}: {exc}") from None
    steps = int(sched.steps)  # type: ignore[arg-type]
    if "count" in raw and count != steps:
        raise PipelineError(f"{where}: count = {count} and epochs = {epochs!r} do not add up ({epochs!r} epochs at "
                            f"rate {sampling.rate!r} are {steps} runs); give one of them")
    return steps


def _parse_budget(raw: Any, delta: float | None) -> Budget:
    if not isinstance(raw, Mapping):
        raise PipelineError(f"privacy.budget must be a table like {{ epsilon = 8.0, delta = 1e-5 }}; got {raw!r}")
    for key in raw:
        if key not in ("epsilon", "delta", "rho"):
            raise PipelineError(f"privacy.budget: unknown key {key!r}; expected epsilon and delta, or rho")
    vals = {k: _check_type("privacy.budget", k, v, "real") for k, v in raw.items()}
    if "rho" in vals:
        if "epsilon" in vals:
            raise PipelineError("privacy.budget: give either epsilon (and delta) or rho, not both")
        if not vals["rho"] >= 0 or math.isinf(vals["rho"]):
            raise PipelineError(f"privacy.budget: rho must be in [0, inf); got {vals['rho']!r}")
        return Budget(rho=float(vals["rho"]))
    if "epsilon" not in vals:
        raise PipelineError("privacy.budget: needs epsilon (and delta) or rho")
    eps = float(vals["epsilon"])
    if not eps >= 0 or math.isinf(eps):
        raise PipelineError(f"privacy.budget: epsilon must be in [0, inf); got {vals['epsilon']!r}")
    bd = float(vals.get("delta", delta if delta is not None else 0.0))
    if not 0.0 <= bd < 1.0:
        raise PipelineError(f"privacy.budget: delta must be in [0, 1); got {vals.get('delta')!r}")
    return Budget(epsilon=eps, delta=bd)


def parse_pipeline(data: Mapping[str, Any], *, source: str = "<pipeline>") -> Pipeline:
    """Build a :class:`Pipeline` from already-decoded TOML/JSON data.

    Raises:
        PipelineError: with a one-line message naming the mechanism and key at fault.
    """
    if not isinstance(data, Mapping):
        raise PipelineError(f"a pipeline must be a table/object at top level; got {_type_name(data)}")
    for key in data:
        if key not in ("privacy", "mechanism", "title"):
            raise PipelineError(f"unknown top-level key {key!r}; expected [privacy] and [[mechanism]] (and title)")
    privacy = data.get("privacy", {})
    if not isinstance(privacy, Mapping):
        raise PipelineError(f"privacy must be a table ([privacy]); got {_type_name(privacy)}")
    try:  # `neighboring` (US spelling) is the same key as `neighbouring`
        privacy = canonical_keywords(dict(privacy), "privacy")
    except TypeError:
        raise PipelineError("privacy: give neighbouring or neighboring, not both") from None
    for key in privacy:
        if key not in ("delta", "budget", "neighbouring"):
            raise PipelineError(f"privacy: unknown key {key!r}; expected delta, budget and neighbouring")
    relation = privacy.get("neighbouring")
    if relation is not None and relation not in ("add_remove", "replace_one"):
        raise PipelineError(f"privacy: neighbouring must be one of add_remove, replace_one; got {relation!r}")
    delta = privacy.get("delta")
    if delta is not None:
        delta = float(_check_type("privacy", "delta", delta, "real"))
        if not 0.0 < delta < 1.0:
            raise PipelineError(f"privacy: delta must be in (0, 1); got {privacy['delta']!r}")
    budget = _parse_budget(privacy["budget"], delta) if "budget" in privacy else None
    if delta is None:
        if budget is not None and budget.delta:
            delta = budget.delta
        else:
            raise PipelineError("privacy: missing required key 'delta' (the δ at which ε is reported)")
    mechs = data.get("mechanism")
    if mechs is None:
        raise PipelineError("no mechanisms: add at least one [[mechanism]] table")
    if isinstance(mechs, Mapping):
        mechs = [mechs]
    if not isinstance(mechs, list) or not mechs:
        raise PipelineError("mechanism must be a non-empty list of tables ([[mechanism]])")
    seen: set[str] = set()
    entries = tuple(_parse_entry(i + 1, raw, seen) for i, raw in enumerate(mechs))
    title = data.get("title", "")
    if not isinstance(title, str):
        raise PipelineError(f"title must be a string; got {_type_name(title)}")
    return Pipeline(entries=entries, delta=delta, budget=budget, source=source, title=title, neighbouring=relation)


def load_pipeline(path: str | os.PathLike[str]) -> Pipeline:
    """Read and parse a pipeline file: TOML, or JSON when the name ends in ``.json``.

    Raises:
        PipelineError: missing/unreadable file, syntax error (with its line number) or an
            invalid pipeline.
    """
    from renyi.core._validation import read_user_text

    p = os.fspath(path)
    text = read_user_text(p, "a pipeline file", PipelineError)
    if p.lower().endswith(".json"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise PipelineError(f"{p}: JSON syntax error at line {e.lineno}, column {e.colno}: {e.msg}") from None
        except RecursionError:  # [[[[...]]]] nested beyond Python's recursion limit
            raise PipelineError(f"{p}: JSON nested too deeply") from None
    else:
        import tomllib

        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise PipelineError(f"{p}: TOML syntax error: {_toml_message(e)}") from None
    try:
        return parse_pipeline(data, source=p)
    except PipelineError as e:
        raise PipelineError(f"{p}: {e}") from None


def _toml_message(e: Exception) -> str:
    # tomllib says "Expected '=' after a key (at line 3, column 7)"; Python 3.14 adds
    # lineno/colno attributes: use them when present, else keep the message as it is.
    msg = str(e).splitlines()[0] if str(e) else "invalid TOML"
    line = getattr(e, "lineno", None)
    if line is not None and "line" not in msg:
        msg = f"{msg} (at line {line}, column {getattr(e, 'colno', '?')})"
    return msg
