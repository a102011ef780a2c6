"""Reading dp-accounting ``DpEvent`` trees into renyi compositions.

dp-accounting (Google) describes what a private computation did as a tree of ``DpEvent``
values, apart from the accountants that interpret it. :func:`from_dp_event` interprets such a
tree with renyi's mechanisms, so every renyi route (exact GDP, RDP, zCDP, ...) answers for it.
The events are recognised by their class names and read through their attributes, so this
module never imports dp-accounting (it works with any version that keeps those names).

Traps this handles (each one a way to get a wrong ε when writing the glue by hand):

* ``RandomizedResponseDpEvent(noise_parameter=p, num_buckets=k)`` outputs the true bucket with
  probability 1 − p + p/k (with probability p it draws a bucket uniformly, which may be the
  true one). Its ε is log(1 + k(1 − p)/p), not log((1 − p)(k − 1)/p).
* ``DiscreteLaplaceDpEvent(noise_parameter=a)`` has mass ∝ e^{−a|x|}: renyi's scale is 1/a.
* ``SampledWithoutReplacementDpEvent`` is analysed under replace-one neighbours
  ([WBK19] Thm 9); ``PoissonSampledDpEvent`` under add/remove ([MTZ19], [ZW19]). The two
  relations are never mixed in one tree.
* ``MixtureOfGaussiansDpEvent(σ, sensitivities, sampling_probs)`` (newer dp-accounting) is read
  when its weights are Binomial(k, q) over the multiples 0, c, …, kc of one sensitivity c: that
  is a person with up to k examples under Poisson sampling of examples, renyi's
  ``PoissonSubsampled(Gaussian(σ, sensitivity=c), q).group(k)``. Other mixtures are refused
  with the reason.

References:
    [MTZ19] Mironov, Talwar, Zhang, Rényi Differential Privacy of the Sampled Gaussian
        Mechanism, arXiv:1908.10530.
    [ZW19] Zhu, Wang, Poisson Subsampled Rényi Differential Privacy, ICML 2019.
    [WBK19] Wang, Balle, Kasiviswanathan, Subsampled Rényi Differential Privacy and Analytical
        Moments Accountant, AISTATS 2019, Thm 9.
"""

from __future__ import annotations

import math
from typing import Any

from renyi.core.errors import ConversionError, DomainError
from renyi.core._names import accepts_neighboring

__all__ = ["from_dp_event", "UnsupportedDpEventError", "SUPPORTED_EVENTS"]

#: Class names of the DpEvents renyi reads.
SUPPORTED_EVENTS = (
    "NoOpDpEvent",
    "NonPrivateDpEvent",
    "GaussianDpEvent",
    "LaplaceDpEvent",
    "DiscreteLaplaceDpEvent",
    "RandomizedResponseDpEvent",
    "ZCDpEvent",
    "PoissonSampledDpEvent",
    "MixtureOfGaussiansDpEvent",
    "SampledWithoutReplacementDpEvent",
    "SelfComposedDpEvent",
    "ComposedDpEvent",
)

_RELATIONS = {"add_remove": "add_remove", "replace_one": "replace_one"}


class UnsupportedDpEventError(ConversionError):
    """A ``DpEvent`` (or one of its sub-events) that renyi cannot account.

    Attributes:
        event: the offending (sub-)event.
    """

    def __init__(self, message: str, event: Any) -> None:
        super().__init__(message)
        self.event = event


def _name(event: Any) -> str:
    return type(event).__name__


def _unsupported(event: Any, why: str) -> UnsupportedDpEventError:
    return UnsupportedDpEventError(f"renyi cannot account for {_name(event)} ({event!r}): {why}", event)


def _relation_of(event: Any) -> set[str]:
    """The neighbouring relations that sub-events of ``event`` require."""
    name = _name(event)
    if name in ("PoissonSampledDpEvent", "MixtureOfGaussiansDpEvent"):
        return {"add_remove"}
    if name in ("SampledWithoutReplacementDpEvent", "RandomizedResponseDpEvent"):
        return {"replace_one"}
    if name == "SelfComposedDpEvent":
        return _relation_of(event.event)
    if name == "ComposedDpEvent":
        out: set[str] = set()
        for e in event.events:
            out |= _relation_of(e)
        return out
    return set()


def _infinite() -> Any:
    from renyi.guarantees import RDP
    from renyi.guarantees.rdp import _Infinite

    return RDP(_Infinite(), label="non-private")


def _count(event: Any, attr: str, minimum: int = 0) -> int:
    """An integer attribute of an event (a count, a size): whole numbers only.

    ``int()`` would truncate ``SelfComposedDpEvent(e, 2.9)`` to 2 steps, billing fewer steps
    than ran (and a count of 0.5 inside a sampling event to none at all), so a fractional,
    non-finite or non-numeric value is refused instead.
    """
    from renyi.core._validation import check_int

    value = getattr(event, attr)
    try:
        return check_int(f"{_name(event)}.{attr}", value, minimum=minimum)
    except TypeError:
        raise DomainError(f"{_name(event)}.{attr} must be an integer in [{minimum}, inf); got {value!r}",
                          name=attr, value=value) from None


def _noise(event: Any, attr: str) -> float:
    """A noise parameter of an event: a number in [0, ∞] (0: no noise, ∞: no output).

    Negative noise has no meaning (and σ⁻² of −1 is that of +1, so a composition of
    Gaussians with σ = −1 inside a sampling event once passed as σ = 0.71).
    """
    value = getattr(event, attr)
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise DomainError(f"{_name(event)}.{attr} must be a number in [0, inf]; got {value!r}",
                          name=attr, value=value) from None
    if not x >= 0.0:  # also NaN
        raise DomainError(f"{_name(event)}.{attr} must be in [0, inf]; got {value!r}", name=attr, value=value)
    return x


def _effective_sigma(event: Any) -> float | None:
    """σ_eff = (Σ σ_i⁻²)^(−1/2) when ``event`` is a tree of Gaussians (several Gaussians on one
    sample compose into one), else None."""
    name = _name(event)
    s: float | None
    if name == "GaussianDpEvent":
        return _noise(event, "noise_multiplier")
    if name == "SelfComposedDpEvent":
        inner = _effective_sigma(event.event)
        if inner is None:
            return None
        n = _count(event, "count")
        return math.inf if n == 0 else (inner / math.sqrt(n) if inner > 0 else 0.0)
    if name == "ComposedDpEvent":
        inv = 0.0
        for e in event.events:
            s = _effective_sigma(e)
            if s is None:
                return None
            if s == 0.0:
                return 0.0
            inv += 0.0 if math.isinf(s) else s**-2
        return math.inf if inv == 0.0 else inv**-0.5
    if name == "NoOpDpEvent":
        return math.inf
    return None


def _mechanism(event: Any, rel: str) -> Any:
    """A renyi mechanism for an event that runs on one sample (the inside of a sampling event)."""
    from renyi.mechanisms import DiscreteLaplace, Gaussian, Laplace

    name = _name(event)
    if name in ("GaussianDpEvent", "ComposedDpEvent", "SelfComposedDpEvent"):
        s = _effective_sigma(event)
        if s is None:
            raise _unsupported(event, "inside a sampling event only a mechanism, or a composition of Gaussians "
                                      "(which composes into one Gaussian), can be subsampled")
        return None if math.isinf(s) else ("non-private" if s == 0.0 else Gaussian(s, 1.0, neighbouring=rel))
    if name == "LaplaceDpEvent":
        b = _noise(event, "noise_multiplier")
        return "non-private" if b == 0.0 else Laplace(b, 1.0)
    if name == "DiscreteLaplaceDpEvent":
        a = _noise(event, "noise_parameter")
        if a == 0.0:
            return "non-private"
        if math.isinf(a):
            return None
        return DiscreteLaplace(1.0 / a, _count(event, "sensitivity", 1), neighbouring=rel)
    if name == "NoOpDpEvent":
        return None
    raise _unsupported(event, "renyi has no subsampling analysis for this event inside a sampling event")


def _inner(event: Any, rel: str) -> Any:
    """The mechanism inside a sampling event (errors name both events)."""
    try:
        return _mechanism(event.event, rel)
    except UnsupportedDpEventError as exc:
        raise UnsupportedDpEventError(f"{exc} (inside {_name(event)})", exc.event) from None


def _convert(event: Any, rel: str) -> Any:
    """The renyi mechanism or guarantee of ``event`` (None for a no-op)."""
    from renyi.guarantees.composition import compose
    from renyi.guarantees import ZCDP
    from renyi.mechanisms import RandomizedResponse
    from renyi.sampling.subsampling import PoissonSubsampled, SubsampledWithoutReplacement

    name = _name(event)
    if name == "NoOpDpEvent":
        return None
    if name == "NonPrivateDpEvent":
        return _infinite()
    if name in ("GaussianDpEvent", "LaplaceDpEvent", "DiscreteLaplaceDpEvent"):
        m = _mechanism(event, rel)
        return _infinite() if m == "non-private" else m
    if name == "RandomizedResponseDpEvent":
        p = float(event.noise_parameter)
        k = _count(event, "num_buckets", 1)
        if not 0.0 <= p <= 1.0:
            raise DomainError(f"RandomizedResponseDpEvent.noise_parameter must be in [0, 1]; got {p!r}",
                              name="noise_parameter", value=p)
        if k < 1:
            raise DomainError(f"RandomizedResponseDpEvent.num_buckets must be an integer in [1, inf); got {k!r}",
                              name="num_buckets", value=k)
        if rel != "replace_one":
            raise _unsupported(event, "randomized response is analysed under replace-one neighbours (a "
                                      "record's value changes), not add/remove")
        if k == 1 or p == 1.0:
            return None  # the output does not depend on the input
        if p == 0.0:
            return _infinite()
        # P(true bucket) = 1 − p + p/k and P(a given other bucket) = p/k: ε = log(1 + k(1−p)/p),
        # rounded up so the stated ε is never below the event's.
        eps = math.log1p(k * (1.0 - p) / p)
        eps = math.nextafter(eps + eps * 4.0 * 2.0**-52, math.inf)
        return RandomizedResponse(eps, max(k, 2))
    if name == "ZCDpEvent":
        return ZCDP(float(event.rho), float(event.xi))
    if name == "SelfComposedDpEvent":
        n = _count(event, "count")
        inner = _convert(event.event, rel)
        if inner is None or n == 0:
            return None
        return inner if n == 1 else inner.compose(n)
    if name == "ComposedDpEvent":
        parts = [p for p in (_convert(e, rel) for e in event.events) if p is not None]
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else compose(*parts)
    if name == "PoissonSampledDpEvent":
        if rel != "add_remove":
            raise _unsupported(event, "Poisson sampling is analysed under add/remove neighbours, not replace-one")
        q = float(event.sampling_probability)
        m = _inner(event, "add_remove")
        if m is None or q == 0.0:
            return None
        if m == "non-private":
            return _infinite()
        return PoissonSubsampled(m, q)
    if name == "SampledWithoutReplacementDpEvent":
        if rel != "replace_one":
            raise _unsupported(event, "sampling without replacement is analysed under replace-one neighbours "
                                      "(WBK19 Thm 9), not add/remove")
        n, m_size = _count(event, "source_dataset_size", 1), _count(event, "sample_size")
        if not 0 <= m_size <= n or n < 1:
            raise DomainError(f"SampledWithoutReplacementDpEvent.sample_size must be in [0, source_dataset_size="
                              f"{n}]; got {m_size!r}", name="sample_size", value=m_size)
        m = _inner(event, "replace_one")
        if m is None or m_size == 0:
            return None
        if m == "non-private":
            return _infinite()
        return SubsampledWithoutReplacement(m, m_size / n)
    if name == "MixtureOfGaussiansDpEvent":
        if rel != "add_remove":
            raise _unsupported(event, "the mixture of Gaussians is analysed under add/remove neighbours, not "
                                      "replace-one")
        return _mixture_of_gaussians(event)
    raise _unsupported(event, f"supported events are {', '.join(SUPPORTED_EVENTS)}")


def _mixture_of_gaussians(event: Any) -> Any:
    """``MixtureOfGaussiansDpEvent`` with Binomial(k, q) weights over 0, c, …, kc (see the module
    docstring) as ``PoissonSubsampled(Gaussian(σ, c), q).group(k)``."""
    from renyi.mechanisms import Gaussian
    from renyi.sampling.subsampling import PoissonSubsampled

    sigma = float(event.standard_deviation)
    sens = [float(c) for c in event.sensitivities]
    probs = [float(p) for p in event.sampling_probs]
    if len(sens) != len(probs) or not sens:
        raise DomainError(f"MixtureOfGaussiansDpEvent needs as many sensitivities as sampling_probs (≥ 1); got "
                          f"{len(sens)} and {len(probs)}", name="sensitivities", value=len(sens))
    if not (math.isfinite(sigma) and sigma >= 0.0):
        raise DomainError(f"MixtureOfGaussiansDpEvent.standard_deviation must be in [0, inf); got {sigma!r}",
                          name="standard_deviation", value=sigma)
    if any(not (math.isfinite(c) and c >= 0.0) for c in sens):
        raise DomainError(f"MixtureOfGaussiansDpEvent.sensitivities must be in [0, inf); got {sens!r}",
                          name="sensitivities", value=sens)
    if any(not (0.0 <= p <= 1.0) for p in probs) or abs(math.fsum(probs) - 1.0) > 1e-9:
        raise DomainError(f"MixtureOfGaussiansDpEvent.sampling_probs must be probabilities summing to 1; got "
                          f"{probs!r}", name="sampling_probs", value=probs)
    law: dict[float, float] = {}
    for c, p in zip(sens, probs):
        if p > 0.0:
            law[c] = law.get(c, 0.0) + p
    positive = sorted(c for c in law if c > 0.0)
    if not positive:
        return None  # the output does not depend on the input
    if sigma == 0.0:
        return _infinite()
    unit = positive[0]
    js = {c: c / unit for c in law}
    if any(abs(j - round(j)) > 1e-9 * max(1.0, j) for j in js.values()):
        raise _unsupported(event, "its sensitivities are not the multiples of one sensitivity (renyi reads "
                                  "Binomial mixtures: a person with up to k examples under Poisson sampling)")
    mass = {int(round(js[c])): p for c, p in law.items()}
    k = max(mass)
    # the rate from the mean number of examples, rounded up by a relative 10⁻⁹ (the weights are
    # given in floating point; a larger rate only adds privacy loss)
    q = min(1.0, math.fsum(j * p for j, p in mass.items()) / k * (1.0 + 1e-9))
    for j in range(k + 1):
        b = math.comb(k, j) * q**j * (1.0 - q) ** (k - j)
        if abs(mass.get(j, 0.0) - b) > 1e-9 + 1e-6 * b:
            raise _unsupported(event, f"its weights are not Binomial(k={k}, q={q:.6g}) (renyi reads Binomial "
                                      "mixtures: a person with up to k examples under Poisson sampling)")
    gauss = Gaussian(sigma, unit)
    if q >= 1.0:
        return Gaussian(sigma, k * unit)
    return PoissonSubsampled(gauss, q).group(k)


@accepts_neighboring
def from_dp_event(event: Any, neighbouring: str | None = None) -> Any:
    """A dp-accounting ``DpEvent`` tree as a renyi mechanism or guarantee.

    Args:
        event: a ``DpEvent`` (any of :data:`SUPPORTED_EVENTS`, nested).
        neighbouring: ``"add_remove"``, ``"replace_one"``, or None to infer it from the tree
            (replace-one when it contains sampling without replacement or randomized response,
            else add/remove). Noise multipliers are taken relative to the sensitivity under
            that relation, as dp-accounting does.

    Returns:
        A renyi mechanism or guarantee (``.epsilon(delta)``, ``.delta(epsilon)``, ...); a
        no-op gives ``PureDP(0)`` and a non-private event a curve that is ∞ everywhere.

    Raises:
        UnsupportedDpEventError: (a ``ConversionError``) an event renyi cannot account, named
            with the reason; also a tree that mixes add/remove and replace-one analyses.
        DomainError: an event parameter out of its domain.

    Examples:
        >>> from dp_accounting import dp_event as e  # doctest: +SKIP
        >>> step = e.PoissonSampledDpEvent(0.01, e.GaussianDpEvent(1.1))  # doctest: +SKIP
        >>> round(from_dp_event(e.SelfComposedDpEvent(step, 1000)).epsilon(1e-5), 4)  # doctest: +SKIP
        1.7117
    """
    from renyi.guarantees import PureDP

    needs = _relation_of(event)
    if neighbouring is None:
        if len(needs) > 1:
            raise _unsupported(event, "it mixes Poisson sampling (add/remove neighbours) with sampling without "
                                      "replacement or randomized response (replace-one neighbours)")
        rel = next(iter(needs)) if needs else "add_remove"
    else:
        if neighbouring not in _RELATIONS:
            raise DomainError(f"neighbouring must be one of add_remove, replace_one; got {neighbouring!r}",
                              name="neighbouring", value=neighbouring)
        rel = neighbouring
    out = _convert(event, rel)
    return PureDP(0.0) if out is None else out
