"""DP-SGD accounting in the words ML users already use.

DP-SGD ([ACG+16]) runs ``steps`` noisy gradient steps. At each step every example is put in
the batch independently with probability ``sample_rate`` (Poisson sampling), each example's
gradient is clipped to ℓ₂ norm C, and Gaussian noise of standard deviation
``noise_multiplier`` · C is added to the sum. Neighbouring data sets differ by adding or
removing one example. One step is therefore ``PoissonSubsampled(Gaussian(noise_multiplier),
sample_rate)`` and a run is that mechanism composed ``steps`` times.

Every function here answers one question about that run:

* :func:`epsilon` — an **upper bound** on ε at δ;
* :func:`delta` — an **upper bound** on δ at ε;
* :func:`noise_multiplier` — a σ at or just above the smallest σ that meets (ε, δ);
* :func:`steps` — the largest number of steps that meets (ε, δ);
* :func:`sample_rate` — a rate at or just below the largest rate that meets (ε, δ).

Each answer is one-sided (the privacy it promises holds) and says how it was obtained
(``answer.method``). A rate can be given as ``sample_rate`` or as ``batch_size`` and
``dataset_size`` (expected batch size over data set size); the length of the run as
``steps`` or as ``epochs`` (one epoch is 1/q steps, rounded up when it is not a whole number,
which only adds privacy loss). Inputs that are arrays are broadcast together and answered as
a sweep (:class:`Sweep`).

**Shuffled batches are not Poisson sampling.** A data loader that shuffles and cuts the data
into fixed-size batches is not covered by these numbers; see ``docs/dpsgd.md``.

References:
    [ACG+16] M. Abadi et al., Deep Learning with Differential Privacy, CCS 2016.
    [MTZ19] I. Mironov, K. Talwar, L. Zhang, Rényi Differential Privacy of the Sampled
        Gaussian Mechanism, arXiv:1908.10530, §3 (the exact per-step RDP curve).
    [CKS20] C. Canonne, G. Kamath, T. Steinke, The Discrete Gaussian for Differential
        Privacy, NeurIPS 2020, Prop. 12 (RDP to (ε, δ)).

Examples:
    >>> from renyi import dpsgd
    >>> eps = dpsgd.epsilon(1.1, 0.01, steps=1000, delta=1e-5)
    >>> round(eps, 2), eps.method.split(":")[0], eps.lower <= eps
    (1.52, 'PLD', True)
    >>> round(dpsgd.epsilon(1.1, 0.01, steps=1000, delta=1e-5, method="rdp"), 4)
    1.7117
    >>> float(dpsgd.epsilon(1.1, batch_size=600, dataset_size=60_000, epochs=10, delta=1e-5)) == eps
    True
    >>> sigma = dpsgd.noise_multiplier(2.0, 1e-5, 0.01, steps=1000)
    >>> dpsgd.epsilon(sigma, 0.01, steps=1000, delta=1e-5) <= 2.0
    True
"""

from __future__ import annotations

import math
import os
import warnings
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from renyi.sampling import _subsampled_dpsgd as sg
from renyi.core._validation import POSITIVE, PROBABILITY_OPEN, Interval, check_int, check_real
from renyi.core.errors import ConversionError, DomainError, RenyiNumericalWarning

__all__ = [
    "Answer",
    "Steps",
    "Sweep",
    "Schedule",
    "schedule",
    "step_mechanism",
    "epsilon",
    "delta",
    "noise_multiplier",
    "steps",
    "sample_rate",
    "shuffle_lower_bound",
    "SAMPLINGS",
]

#: Sampling rates: a rate of 0 would spend nothing and make every question degenerate.
RATE = Interval(0.0, 1.0, hi_closed=True)
_RDP_METHOD = "RDP: CKS20 Prop. 12 on the exact MTZ19 curve (α optimised)"
_RDP_DELTA_METHOD = "RDP: CKS20 Prop. 12 (log-δ form) on the exact MTZ19 curve (α optimised)"


# ----------------------------------------------------------------------------------------------
# Answers
# ----------------------------------------------------------------------------------------------
class Answer(float):
    """A float that says what it bounds and how it was obtained.

    Attributes:
        method: the route and theorem used (``"RDP: CKS20 Prop. 12 ..."``).
        bound: the direction of the guarantee in words, e.g. ``"upper bound on ε"``.
        witness: the Rényi order α at which the bound was evaluated (None when not order-based).
        lower: a lower bound on the same quantity when the route provides one, else None.
        achieved: for the solvers, the ε (upper bound) that the returned parameter achieves.
    """

    __slots__ = ("method", "bound", "witness", "lower", "achieved")

    method: str
    bound: str
    witness: float | None
    lower: float | None
    achieved: float | None

    def __new__(cls, value: float, method: str, bound: str, *, witness: float | None = None,
                lower: float | None = None, achieved: float | None = None) -> Answer:
        obj = float.__new__(cls, value)
        obj.method, obj.bound, obj.witness, obj.lower, obj.achieved = method, bound, witness, lower, achieved
        return obj

    def __repr__(self) -> str:
        return f"{float(self)!r} ({self.bound}; {self.method})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_answer, (float(self), self.method, self.bound, self.witness, self.lower, self.achieved))


def _answer(value: float, method: str, bound: str, witness: float | None, lower: float | None,
            achieved: float | None) -> Answer:
    return Answer(value, method, bound, witness=witness, lower=lower, achieved=achieved)


class Steps(int):
    """An ``int`` number of steps that says how it was obtained (see :class:`Answer`)."""

    method: str
    bound: str
    achieved: float | None

    def __new__(cls, value: int, method: str, bound: str, *, achieved: float | None = None) -> Steps:
        obj = int.__new__(cls, value)
        obj.method, obj.bound, obj.achieved = method, bound, achieved
        return obj

    def __repr__(self) -> str:
        return f"{int(self)!r} ({self.bound}; {self.method})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (int, (int(self),))


@dataclass(frozen=True, slots=True)
class Sweep:
    """Answers for an array of configurations (the inputs broadcast together).

    Attributes:
        values: the answers, with the broadcast shape.
        witnesses: the Rényi order of each answer (NaN where not order-based).
        method: the route used.
        bound: the direction of every answer, in words.
    """

    values: np.ndarray
    witnesses: np.ndarray
    method: str
    bound: str

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self.values if dtype is None else self.values.astype(dtype)

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, i: Any) -> Any:
        return self.values[i]


# ----------------------------------------------------------------------------------------------
# Schedule: rate and steps from what the user gave
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Schedule:
    """A DP-SGD schedule: the sampling rate q and the number of steps T.

    Attributes:
        sample_rate: q ∈ (0, 1].
        steps: T, an integer ≥ 1 (None when the question is how many steps).
    """

    sample_rate: float
    steps: int | None


def _rate(sample_rate: Any, batch_size: Any, dataset_size: Any) -> tuple[float, Fraction | None]:
    """q from ``sample_rate`` or ``batch_size``/``dataset_size``; also q as an exact fraction when
    it came from integers (so that epochs convert to steps without rounding)."""
    frac: Fraction | None = None
    if dataset_size is not None:
        n = check_int("dataset_size", dataset_size, minimum=1)
    if batch_size is not None:
        b = check_int("batch_size", batch_size, minimum=1)
        if dataset_size is None:
            raise DomainError("batch_size needs dataset_size (the sampling rate is batch_size / dataset_size); "
                              f"got batch_size={batch_size!r} and no dataset_size", name="dataset_size", value=None)
        if b > n:
            raise DomainError(f"batch_size must be at most dataset_size (the sampling rate must be in {RATE}); "
                              f"got batch_size={b} > dataset_size={n}", name="batch_size", value=b)
        frac = Fraction(b, n)
    if sample_rate is None:
        if frac is None:
            raise DomainError("give sample_rate, or batch_size and dataset_size; got neither", name="sample_rate",
                              value=None)
        return float(frac), frac
    q = RATE.check("sample_rate", sample_rate)
    if frac is not None and abs(q - float(frac)) > 1e-12 * q:
        raise DomainError(f"sample_rate {q!r} does not add up with batch_size / dataset_size = {b}/{n} = "
                          f"{float(frac)!r}; give one of them", name="sample_rate", value=q)
    return q, frac


def _steps_of_epochs(epochs: float, q: float, frac: Fraction | None) -> int:
    """T = epochs/q steps, rounded up when not whole (more steps only add privacy loss)."""
    # Neither 1/q nor a decimal number of epochs is exact in binary (3 epochs at q = 0.01 give
    # 300.00000000000006 steps): a whole number within 10⁻⁹ counts as whole.
    if frac is not None:
        tf = Fraction(epochs) / frac
        rf = round(tf)
        if abs(tf - rf) <= Fraction(1, 10**9) * max(Fraction(1), tf):
            return max(1, int(rf))
        return max(1, math.ceil(tf))
    t = epochs / q
    if not math.isfinite(t) or t > 2.0**62:
        raise DomainError(f"epochs / sample_rate must be at most 2**62 steps; got {t!r}", name="epochs", value=epochs)
    r = round(t)
    if abs(t - r) <= 1e-9 * max(1.0, t):
        return max(1, int(r))
    return max(1, math.ceil(t))


def schedule(sample_rate: Any = None, *, steps: Any = None, epochs: Any = None, batch_size: Any = None,
             dataset_size: Any = None, need_steps: bool = True) -> Schedule:
    """Resolve a DP-SGD schedule from any consistent combination of the usual words.

    Args:
        sample_rate: q ∈ (0, 1], or None when ``batch_size`` and ``dataset_size`` are given.
        steps: number of steps T ≥ 1.
        epochs: passes over the data (> 0); T = epochs/q, rounded up when not whole.
        batch_size: expected batch size B ≥ 1 (Poisson sampling: q = B/n).
        dataset_size: data set size n ≥ B.
        need_steps: whether a length (steps or epochs) is required.

    Returns:
        :class:`Schedule` (q, T).

    Raises:
        DomainError: a rate outside (0, 1], a value out of its domain, or a combination that
            does not add up (steps ≠ epochs/q, sample_rate ≠ batch_size/dataset_size, a batch
            larger than the data set, batch_size without dataset_size).

    Examples:
        >>> schedule(batch_size=256, dataset_size=60_000, epochs=3)
        Schedule(sample_rate=0.004266666666666667, steps=704)
    """
    q, frac = _rate(sample_rate, batch_size, dataset_size)
    t_steps = None if steps is None else check_int("steps", steps, minimum=1)
    t_epochs = None
    if epochs is not None:
        e = POSITIVE.check("epochs", epochs)
        if math.isinf(e):
            raise DomainError(f"epochs must be in (0, inf); got {epochs!r}", name="epochs", value=epochs)
        t_epochs = _steps_of_epochs(e, q, frac)
    if t_steps is not None and t_epochs is not None and t_steps != t_epochs:
        raise DomainError(
            f"steps and epochs do not add up: {epochs!r} epochs at sample rate {q!r} are {t_epochs} steps, "
            f"not {t_steps}; give one of them", name="steps", value=t_steps)
    t = t_steps if t_steps is not None else t_epochs
    if t is None and need_steps:
        raise DomainError("give steps or epochs (the length of the run); got neither", name="steps", value=None)
    return Schedule(q, t)


def step_mechanism(noise_multiplier: float, sample_rate: float) -> Any:
    """One DP-SGD step as a renyi mechanism: ``PoissonSubsampled(Gaussian(σ), q)``.

    Args:
        noise_multiplier: σ ∈ (0, ∞) (noise standard deviation over the clipping norm).
        sample_rate: q ∈ (0, 1].
    """
    from renyi.mechanisms import Gaussian
    from renyi.sampling.subsampling import PoissonSubsampled

    q = RATE.check("sample_rate", sample_rate)
    return PoissonSubsampled(Gaussian(POSITIVE.check("noise_multiplier", noise_multiplier)), q)


# ----------------------------------------------------------------------------------------------
# Routes
# ----------------------------------------------------------------------------------------------
#: The routes these functions take: ``None`` is the tightest of them.
METHODS = (None, "rdp", "pld")
_PLD_METHOD = "PLD: privacy loss distribution of the Poisson-subsampled Gaussian (certified upper bound)"


def _round_up(x: float) -> float:
    if not math.isfinite(x) or x <= 0.0:
        return max(x, 0.0)
    return math.nextafter(x + x * 4.0 * 2.0**-52, math.inf)


def _eps_rdp(q: float, sigma: float, t: int, dlt: float) -> tuple[float, float]:
    """(ε upper bound, witness α) on the RDP route, rounded up."""
    e, a = sg._eps_one(q, sigma, t, math.log(dlt))
    return _round_up(e), a


def _check_method(method: Any) -> str | None:
    if method not in METHODS:
        raise DomainError(f"method must be one of None, 'rdp', 'pld'; got {method!r}", name="method", value=method)
    return method  # type: ignore[no-any-return]


def _pld_engine(method: str | None) -> Any:
    """The PLD engine when ``method`` asks for it (None: if installed), else None."""
    if method == "rdp":
        return None
    if method is None and os.environ.get("RENYI_PLD_ROUTE", "1").strip().lower() in ("0", "false", "no", "off"):
        # the escape hatch (renyi.pld.ROUTE_ENABLED reads the same variable): not even an import
        return None
    from renyi.accounting.routes import pld_available

    engine = pld_available()
    if engine is None and method == "pld":
        raise DomainError("method 'pld' needs the PLD engine (renyi.pld), which this installation does not have",
                          name="method", value=method)
    return engine


def _pld_bounds(engine: Any, q: float, sigma: float, t: int, x: float, which: str,
                method: str | None) -> tuple[float, float] | None:
    """(lower, upper) of ε at δ = x (``which="epsilon"``) or of δ at ε = x on the PLD route.

    With ``method=None`` the route is used when the engine offers it (``supports``; the engine
    may keep its route off by default because of its cost); ``method="pld"`` asks for it.
    """
    if engine is None:
        return None
    m = step_mechanism(sigma, q)
    if method is None and not engine.supports(m):
        return None
    fn = engine.epsilon_bounds if which == "epsilon" else engine.delta_bounds
    try:
        lo, hi = fn([(m, t)], x)
    except ConversionError:
        if method == "pld":
            raise
        return None
    return float(lo), float(hi)


_CLT_METHOD = ("CLT: Berry–Esseen on the composed loss of a discretised dominating pair of the "
               "Poisson-subsampled Gaussian (certified upper bound)")


#: The routes whose answer a solver refines past the RDP answer (a tighter bound than RDP's).
_NUMERIC_METHODS = (_PLD_METHOD, _CLT_METHOD)


#: :data:`renyi.accounting._clt.MIN_STEPS` and ``WIDE_STEPS``, here so that a call with fewer
#: steps does not import that module (scipy.special and mpmath); a test keeps them equal.
_CLT_MIN_STEPS = 2**24
_CLT_WIDE_STEPS = 2**14


def _clt_bounds(q: float, sigma: float, t: int, x: float, which: str,
                method: str | None, min_steps: int = _CLT_MIN_STEPS) -> tuple[float, float] | None:
    """(lower, upper) of ε at δ = x or of δ at ε = x on the CLT route (from ``min_steps``
    steps; in the default minimum only), or None where it does not apply."""
    if method is not None or t < min_steps or not 0.0 < q < 1.0:
        return None
    from renyi.accounting import _clt

    fn = _clt.epsilon_bounds if which == "epsilon" else _clt.delta_bounds
    try:
        lo, hi = fn([(step_mechanism(sigma, q), t)], x, min_steps=min_steps)
    except ConversionError:
        return None
    return float(lo), float(hi)


def _eps_best(q: float, sigma: float, t: int, dlt: float, method: str | None,
              engine: Any = False) -> Answer:
    """The smallest ε upper bound over the routes ``method`` allows, with the best lower bound
    (PLD's or the CLT route's)."""
    if engine is False:
        engine = _pld_engine(method)
    best: Answer | None = None
    lowers: list[float] = []

    def take(bounds: tuple[float, float], how: str) -> None:
        nonlocal best
        lowers.append(bounds[0])
        if best is None or bounds[1] < best:
            best = Answer(bounds[1], how, "upper bound on ε")

    if method in (None, "rdp"):
        e, a = _eps_rdp(q, sigma, t, dlt)
        best = Answer(e, _RDP_METHOD, "upper bound on ε", witness=a)
    c = _clt_bounds(q, sigma, t, dlt, "epsilon", method)
    if c is not None:
        take(c, _CLT_METHOD)
    if best is not None and float(best) == 0.0:
        # a bound of 0 already: no valid bound is smaller, and the PLD grid is not built (σ = 0.5,
        # q = 1e-5, 2·10⁴ steps at δ = 0.1: 22 s of CPU for the same 0; issue #26)
        return Answer(0.0, best.method, best.bound, witness=best.witness, lower=0.0)
    if c is None or c[1] - c[0] > 1e-3 * c[1]:
        # (a CLT bracket within 0.1 %: the PLD grid, which cannot resolve ≥ 2²⁴ small-rate
        # steps and would warn, is not asked)
        b = _pld_bounds(engine, q, sigma, t, dlt, "epsilon", method)
        if b is not None:
            take(b, _PLD_METHOD)
        if c is None and (b is None or b[1] - b[0] > 0.01 * b[1]):
            # the PLD bracket is wide (or unresolved): the CLT route from fewer steps, so that
            # ε does not drop at its threshold where the PLD grid is not tight
            c = _clt_bounds(q, sigma, t, dlt, "epsilon", method, _CLT_WIDE_STEPS)
            if c is not None:
                take(c, _CLT_METHOD)
    assert best is not None
    if lowers:
        return Answer(float(best), best.method, best.bound, witness=best.witness,
                      lower=min(max(lowers), float(best)))
    return best


def _is_array(*xs: Any) -> bool:
    return any(isinstance(x, (list, tuple, np.ndarray)) and np.ndim(x) > 0 for x in xs)


# ----------------------------------------------------------------------------------------------
# Batches that are not Poisson-sampled
# ----------------------------------------------------------------------------------------------
#: The batch samplers :func:`epsilon` accounts for.
SAMPLINGS = ("poisson", "allocation", "shuffle")


def _check_sampling(sampling: Any) -> str:
    if sampling not in SAMPLINGS:
        raise DomainError(f"sampling must be one of 'poisson', 'allocation', 'shuffle'; got {sampling!r}",
                          name="sampling", value=sampling)
    return str(sampling)


def _per_epoch(q: float, steps_: int) -> tuple[int, int]:
    """(t, E): t = 1/q batches per epoch (a whole number) and E = ⌈steps/t⌉ epochs."""
    inv = 1.0 / q
    t = int(round(inv))
    if t < 1 or abs(t - inv) > 1e-9 * inv:
        raise DomainError(f"sample_rate must be 1/t for a whole number t of batches per epoch with fixed "
                          f"batches; got {q!r} (1/q = {inv!r})", name="sample_rate", value=q)
    return t, -(-steps_ // t)


def shuffle_lower_bound(noise_multiplier: float, steps_per_epoch: int, epochs: int, delta: float) -> float:
    """A certified lower bound on the ε (at δ) of DP-SGD with shuffled fixed batches.

    Two neighbouring data sets (replace-one, clipping norm 1, a linear loss whose per-example
    gradient is the example itself): every example is −1 except one, which is +1 in one data
    set and −1 in the other. Each epoch shuffles the data into t batches, so the batch sums
    are known except that one uniformly random batch is shifted by 2 in the first data set:
    the outputs of an epoch are exactly the random-allocation pair (1/t)Σ_i N(2e_i, σ²I)
    against N(0, σ²I), independent across epochs. The true ε of the loader is at least that
    of this pair, whose certified lower end the PLD engine gives ([CGKKMSZ24] use the same
    construction).

    Args:
        noise_multiplier: σ ∈ (0, ∞).
        steps_per_epoch: t ≥ 1 batches per epoch.
        epochs: E ≥ 1.
        delta: δ ∈ (0, 1).

    References:
        [CGKKMSZ24] L. Chua, B. Ghazi, P. Kamath, R. Kumar, P. Manurangsi, A. Sinha, C. Zhang,
            How Private are DP-SGD Implementations?, ICML 2024.
    """
    from renyi.accounting.pld import epsilon_bounds
    from renyi.mechanisms import Gaussian

    sigma = POSITIVE.check("noise_multiplier", noise_multiplier)
    t = check_int("steps_per_epoch", steps_per_epoch, minimum=1)
    e = check_int("epochs", epochs, minimum=1)
    d = PROBABILITY_OPEN.check("delta", delta)
    from renyi.accounting.pld._allocation import shift_item

    if t == 1:  # one batch: every example in it, the pair is the Gaussian with shift 2
        return float(epsilon_bounds([(Gaussian(sigma / 2.0), e)], d, fallback=False)[0])
    # a lower bound needs no fine lattice: a coarse one is as valid and faster. Only the
    # bracket's certified lower end is used, so a bracket too wide to be an *upper* answer
    # (above the RDP route: the engine would refuse it as one) still gives it
    from renyi.accounting.pld.distribution import epsilon_bracket

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RenyiNumericalWarning)
        return float(epsilon_bracket([(shift_item(2.0 / sigma, t), e)], d, fallback=True).lower)


def _eps_sampled(sampling: str, q: float, sigma: float, steps_: int, dlt: float, method: str | None) -> Answer:
    from renyi.accounting.routes import best_epsilon
    from renyi.mechanisms import Gaussian
    from renyi.sampling.allocation import RandomAllocation

    t, e = _per_epoch(q, steps_)
    if sampling == "allocation":
        one = RandomAllocation(Gaussian(sigma), steps=t)
        c = best_epsilon(one if e == 1 else one.compose(e), dlt, method)
        return Answer(c.value, f"random allocation (balls-in-bins), t = {t} batches per epoch, {e} epoch(s): "
                      f"{c.method}", "upper bound on ε", witness=c.witness, lower=c.lower)
    # shuffle: no amplification: one Gaussian of sensitivity 2 (replace-one) per epoch
    g = Gaussian(sigma, sensitivity=2.0, neighbouring="replace_one")
    c = best_epsilon(g if e == 1 else g.compose(e), dlt, None if method == "pld" else method)
    lower: float | None
    try:
        lower = min(shuffle_lower_bound(sigma, t, e, dlt), float(c.value))
    except ConversionError:
        lower = None
    return Answer(c.value, f"shuffled fixed batches, t = {t} per epoch, {e} epoch(s), replace-one neighbours: "
                  f"no amplification (one Gaussian of sensitivity 2 per epoch); lower: certified shuffling "
                  f"lower bound; {c.method}", "upper bound on ε", witness=c.witness, lower=lower)


# ----------------------------------------------------------------------------------------------
# Questions
# ----------------------------------------------------------------------------------------------
def epsilon(noise_multiplier: Any, sample_rate: Any = None, *, steps: Any = None, epochs: Any = None,
            delta: Any, batch_size: Any = None, dataset_size: Any = None, method: str | None = None,
            event: Any = None, sampling: str = "poisson", group_size: Any = 1) -> Answer | Sweep:
    """An upper bound on the ε of DP-SGD at ``delta``.

    ``sampling`` says how the batches were drawn (the number returned is only valid for that
    sampler):

    * ``"poisson"`` (default): every example in every batch independently with probability q;
    * ``"allocation"``: random allocation (balls-in-bins): in each epoch every example is put
      into one of t = 1/q batches chosen uniformly at random (:class:`renyi.RandomAllocation`,
      accounted by its PLD route; a partial last epoch is accounted as a whole one);
    * ``"shuffle"``: the data shuffled and cut into t = 1/q fixed batches per epoch. No
      amplification theorem is known for it: the value is the unamplified bound (each example
      used once per epoch; replace-one neighbours, one Gaussian of sensitivity 2 per epoch) and
      ``.lower`` is a certified lower bound on the true ε of such a loader (see
      :func:`shuffle_lower_bound`), which can exceed the Poisson number.

    With ``event`` (a :class:`renyi.batches.SamplerEvent`, the ``.event`` of the sampler that
    ran) the ε is that of the sampler that actually ran (Poisson, random allocation, truncated
    Poisson or shuffling), and every other number given must agree with it
    (:meth:`~renyi.batches.SamplerEvent.check`): a disagreement raises instead of returning
    the ε of a run that did not happen.

    Args:
        noise_multiplier: σ ∈ (0, ∞).
        sample_rate: q ∈ (0, 1] (or give ``batch_size`` and ``dataset_size``).
        steps: T ≥ 1 (or give ``epochs``).
        epochs: passes over the data, > 0.
        delta: δ ∈ (0, 1).
        batch_size: expected batch size, 1 ≤ B ≤ n.
        dataset_size: data set size n.
        method: ``None`` (the tightest route: the smaller of the RDP bound and the PLD upper
            bound; ``RENYI_PLD_ROUTE=0`` leaves PLD out), ``"rdp"`` (the fast path alone) or
            ``"pld"`` (the PLD engine alone).
        sampling: ``"poisson"``, ``"allocation"`` or ``"shuffle"`` (see above).
        group_size: k ≥ 1: the unit is a person with up to k examples (examples are still
            Poisson-sampled; see :func:`group_step`). 1 (the default) is example-level DP;
            k > 1 needs ``sampling="poisson"``.

    Returns:
        :class:`Answer` (a float: an upper bound on ε, with ``method``, ``witness`` for RDP and
        ``lower`` — a lower bound on the true ε — when the PLD route ran), or a
        :class:`Sweep` when any argument is an array.

    Raises:
        DomainError: out-of-domain values, or a schedule that does not add up.

    Examples:
        >>> e = epsilon(1.1, 0.01, steps=10_000, delta=1e-5, method="rdp")
        >>> round(e, 4), round(e.witness, 2)
        (5.6318, 4.67)
        >>> epsilon([0.8, 1.1], 0.01, steps=1000, delta=1e-5, method="rdp").values.round(3)
        array([3.695, 1.712])
    """
    method = _check_method(method)
    sampling = _check_sampling(sampling)
    k = _group_size(group_size, dataset_size)
    if k > 1:
        if sampling != "poisson":
            raise DomainError(f"group_size > 1 is analysed for Poisson sampling of examples only; got "
                              f"sampling={sampling!r} (other samplers: the generic .group(k) of their guarantee)",
                              name="group_size", value=group_size)
        if event is not None or _is_array(noise_multiplier, sample_rate, steps, epochs, delta, batch_size,
                                          dataset_size):
            raise DomainError("group_size > 1 takes scalar arguments and no event (one question at a time)",
                              name="group_size", value=group_size)
        sigma = POSITIVE.check("noise_multiplier", noise_multiplier)
        dlt = PROBABILITY_OPEN.check("delta", delta)
        s = schedule(sample_rate, steps=steps, epochs=epochs, batch_size=batch_size, dataset_size=dataset_size)
        assert s.steps is not None
        return _eps_group(s.sample_rate, sigma, s.steps, dlt, k, method)
    if event is not None:
        if sampling != "poisson":
            raise DomainError("give either event=... (the sampler that ran says how batches were drawn) or "
                              f"sampling={sampling!r}, not both", name="sampling", value=sampling)
        return _epsilon_of_event(event, noise_multiplier, sample_rate, steps, epochs, delta, batch_size,
                                 dataset_size, method)
    if _is_array(noise_multiplier, sample_rate, steps, epochs, delta, batch_size, dataset_size):
        if sampling != "poisson":
            raise DomainError(f"sweeps are for Poisson sampling; ask sampling={sampling!r} one value at a time",
                              name="sampling", value=sampling)
        return _epsilon_sweep(noise_multiplier, sample_rate, steps, epochs, delta, batch_size, dataset_size, method)
    sigma = POSITIVE.check("noise_multiplier", noise_multiplier)
    dlt = PROBABILITY_OPEN.check("delta", delta)
    s = schedule(sample_rate, steps=steps, epochs=epochs, batch_size=batch_size, dataset_size=dataset_size)
    assert s.steps is not None
    if sampling != "poisson":
        return _eps_sampled(sampling, s.sample_rate, sigma, s.steps, dlt, method)
    return _eps_best(s.sample_rate, sigma, s.steps, dlt, method)


def _epsilon_of_event(event: Any, noise_multiplier: Any, sample_rate: Any, steps_: Any, epochs: Any, delta_: Any,
                      batch_size: Any, dataset_size: Any, method: str | None = None) -> Answer:
    from renyi.sampling.batches import SamplerEvent

    if not isinstance(event, SamplerEvent):
        raise TypeError(f"event must be a renyi.batches.SamplerEvent; got {type(event).__name__}")
    if batch_size is not None and sample_rate is None:
        n = dataset_size if dataset_size is not None else event.dataset_size
        sample_rate = check_real("batch_size", batch_size) / check_int("dataset_size", n)
    event.check(sample_rate=sample_rate, steps=steps_, epochs=epochs, dataset_size=dataset_size,
                noise_multiplier=noise_multiplier)
    dlt = PROBABILITY_OPEN.check("delta", delta_)
    mech = event.mechanism(noise_multiplier)
    if method is None:
        c = mech.best_epsilon(dlt)
    else:
        from renyi.accounting.routes import best_epsilon

        c = best_epsilon(mech, dlt, method)
    return Answer(c.value, f"{event.describe()}: {event.theorem}; {c.method}", "upper bound on ε",
                  witness=c.witness)


def _epsilon_sweep(noise_multiplier: Any, sample_rate: Any, steps_: Any, epochs: Any, delta_: Any,
                   batch_size: Any, dataset_size: Any, method: str | None) -> Sweep:
    arrays = np.broadcast_arrays(*(np.asarray(x if x is not None else np.nan, dtype=object)
                                   for x in (noise_multiplier, sample_rate, steps_, epochs, delta_, batch_size,
                                             dataset_size)))
    shape = arrays[0].shape
    flat = [a.ravel() for a in arrays]
    size = flat[0].size
    qs, ts = np.empty(size), np.empty(size)

    def opt(v: Any) -> Any:
        return None if isinstance(v, float) and math.isnan(v) else v

    for i in range(size):
        s = schedule(opt(flat[1][i]), steps=opt(flat[2][i]), epochs=opt(flat[3][i]), batch_size=opt(flat[5][i]),
                     dataset_size=opt(flat[6][i]))
        qs[i], ts[i] = s.sample_rate, float(s.steps)  # type: ignore[arg-type]
    sig = POSITIVE.check_array("noise_multiplier", np.asarray([check_real("noise_multiplier", v) for v in flat[0]]))
    dl = PROBABILITY_OPEN.check_array("delta", np.asarray([check_real("delta", v) for v in flat[4]]))
    engine = _pld_engine(method)
    if method == "rdp" or engine is None:
        e, a = sg.dpsgd_epsilon_many(qs, sig, ts, dl)
        e = np.where(np.isfinite(e) & (e > 0), np.nextafter(e * (1.0 + 4.0 * 2.0**-52), np.inf), e)
        return Sweep(e.reshape(shape), a.reshape(shape), _RDP_METHOD, "upper bound on ε")
    # with the PLD route: one configuration at a time (each answer the tightest of its routes)
    answers = [_eps_best(float(qs[i]), float(sig[i]), int(ts[i]), float(dl[i]), method, engine) for i in range(size)]
    vals = np.array([float(x) for x in answers]).reshape(shape)
    wit = np.array([np.nan if x.witness is None else x.witness for x in answers]).reshape(shape)
    used = sorted({x.method for x in answers})
    return Sweep(vals, wit, "; ".join(used), "upper bound on ε")


def delta(noise_multiplier: Any, sample_rate: Any = None, *, steps: Any = None, epochs: Any = None,
          epsilon: Any, batch_size: Any = None, dataset_size: Any = None, method: str | None = None,
          group_size: Any = 1) -> Answer:
    """An upper bound on the δ of DP-SGD at ``epsilon`` (arguments as in :func:`epsilon`).

    Examples:
        >>> d = delta(1.1, 0.01, steps=1000, epsilon=1.7117143312242322 * (1 + 1e-9))
        >>> d <= 1e-5
        True
    """
    method = _check_method(method)
    sigma = POSITIVE.check("noise_multiplier", noise_multiplier)
    eps = Interval(0.0, math.inf, lo_closed=True).check("epsilon", epsilon)
    s = schedule(sample_rate, steps=steps, epochs=epochs, batch_size=batch_size, dataset_size=dataset_size)
    assert s.steps is not None
    k = _group_size(group_size, dataset_size)
    if k > 1:
        return _delta_group(s.sample_rate, sigma, s.steps, eps, k, method)
    best: Answer | None = None
    if method in (None, "rdp"):
        log_d, a = sg.dpsgd_log_delta(s.sample_rate, sigma, s.steps, eps)
        d = 1.0 if log_d >= 0 else min(1.0, _round_up(math.exp(log_d)))
        best = Answer(d, _RDP_DELTA_METHOD, "upper bound on δ", witness=a)
    c = _clt_bounds(s.sample_rate, sigma, s.steps, eps, "delta", method)
    if c is not None and (best is None or c[1] < best):
        best = Answer(min(1.0, c[1]), _CLT_METHOD, "upper bound on δ", lower=c[0])
    if c is not None and c[1] - c[0] <= 1e-2 * c[1]:  # δ within 1 % (ε within ~0.05 %)
        assert best is not None
        return best
    if best is not None and float(best) == 0.0:
        return best  # δ = 0 already: no valid bound is smaller (the PLD grid is not built)
    b = _pld_bounds(_pld_engine(method), s.sample_rate, sigma, s.steps, eps, "delta", method)
    if b is not None and (best is None or b[1] < best):
        best = Answer(min(1.0, b[1]), _PLD_METHOD, "upper bound on δ", lower=b[0])
    if c is None and (b is None or b[1] - b[0] > 0.05 * b[1]):
        # a wide PLD bracket: the CLT route from fewer steps (as in :func:`epsilon`)
        c = _clt_bounds(s.sample_rate, sigma, s.steps, eps, "delta", method, _CLT_WIDE_STEPS)
        if c is not None and (best is None or c[1] < best):
            best = Answer(min(1.0, c[1]), _CLT_METHOD, "upper bound on δ", lower=c[0])
    assert best is not None
    return best


def _check_targets(target_epsilon: Any, target_delta: Any) -> tuple[float, float]:
    eps = POSITIVE.check("target_epsilon", target_epsilon)
    if math.isinf(eps):
        raise DomainError(f"target_epsilon must be in (0, inf); got {target_epsilon!r}", name="target_epsilon",
                          value=target_epsilon)
    return eps, PROBABILITY_OPEN.check("target_delta", target_delta)


def _pld_refine(meets: Any, seen: dict[float, Answer], target: float, x_safe: float, toward: float,
                integer: bool, rtol: float = 1e-4, rdp: Any = None, floor: float = 0.0) -> float:
    """Move a parameter that meets the target on the tighter route toward less privacy.

    ``meets(x)`` is the verified criterion (the tightest ε ≤ target) and records its answer in
    ``seen[x]``; ``x_safe`` meets it; ``toward`` is +1 when larger x means less privacy (rate,
    steps) and −1 for σ. The boundary is found by a safeguarded secant method on
    f(t) = log(ε(eᵗ)/target) (regula falsi with the Illinois modification once the boundary
    is bracketed, a bisection step whenever it stalls): ε is smooth in the parameter apart from
    the discretisation of the PLD bound, so a few evaluations suffice where bisection needs a
    dozen. Only verified points are returned: the result meets the target and lies within
    ``rtol`` (relative; integers: 1) of the boundary, or its ε within ``rtol/2`` of the target.
    ``rdp(x)``, the RDP route's ε (milliseconds), gives the first slope. ``floor``: the
    smallest x tried (σ: :data:`~renyi.sampling._subsampled_dpsgd.SIGMA_FLOOR`, as the RDP solver).
    """
    lt = math.log(target)

    def x_of(t: float) -> float:
        x = math.exp(t)
        if integer:
            x = float(max(1, math.floor(x) if toward > 0 else math.ceil(x)))
        elif toward > 0:
            x = min(x, 1.0)  # rates
        return max(x, floor)

    def f(x: float) -> float:
        meets(x)
        v = float(seen[x])
        return -math.inf if v <= 0.0 else (math.log(v) - lt if math.isfinite(v) else math.inf)

    xa = x_safe
    fa = f(xa)
    xb: float | None = None
    fb = math.inf
    slope = toward * 1.0  # df/dt to start with: ε ∝ q, ∝ 1/σ, ∝ √T roughly (|slope| 0.5 … 2)
    if rdp is not None:
        # the RDP route's slope at x_safe: close to the PLD one (both follow the same loss)
        try:
            d_t = 0.01 * toward
            e0, e1 = float(rdp(x_safe)), float(rdp(x_safe * math.exp(d_t)))
            if 0.0 < e0 < math.inf and 0.0 < e1 < math.inf and (math.log(e1) - math.log(e0)) / d_t * toward > 0:
                slope = (math.log(e1) - math.log(e0)) / d_t
        except (ArithmeticError, ValueError):
            pass
    last: tuple[float, float] | None = None  # the previous point, for a secant before bracketing
    side = 0  # Illinois: +k when the unsafe end was kept k times in a row, −k for the safe end
    for it in range(40):
        if not integer and fa > -rtol / 2:
            break  # ε within rtol/2 of the target: as close as the question needs
        if xb is not None:
            if integer and abs(xb - xa) <= max(1.0, 1e-7 * xa):
                break  # (within 10⁻⁷ of 10¹² steps is as close as the question needs)
            if not integer and abs(math.log(xb / xa)) <= rtol:
                break
        ta = math.log(xa)
        aim = -rtol / 8  # aim just inside the target, so that most new points are verified ones
        if xb is None:
            if last is not None and last[0] != ta and math.isfinite(last[1]) and math.isfinite(fa):
                s_ = (fa - last[1]) / (ta - last[0])
                if s_ * toward > 0:
                    slope = s_
            step = (aim - fa) / slope if math.isfinite(fa) else toward * 0.5
            step = toward * min(max(abs(step), 1e-4), 1.0)  # at most a factor e per step
            t_new = ta + step
        else:
            tb = math.log(xb)
            if not (math.isfinite(fa) and math.isfinite(fb)):
                t_new = 0.5 * (ta + tb)
            else:
                # Illinois: an end kept twice in a row counts with half its value
                fa_w = fa * (0.5 if side <= -2 else 1.0)
                fb_w = fb * (0.5 if side >= 2 else 1.0)
                t_new = ta + (aim - fa_w) * (tb - ta) / (fb_w - fa_w) if fb_w != fa_w else 0.5 * (ta + tb)
                lo_, hi_ = min(ta, tb), max(ta, tb)
                pad = 0.02 * (hi_ - lo_)
                t_new = min(max(t_new, lo_ + pad), hi_ - pad)
        x = x_of(t_new)
        if x == xa or (xb is not None and x == xb):
            if integer:
                x = xa + toward if xb is None else float(math.floor((xa + xb) / 2) if toward > 0
                                                           else math.ceil((xa + xb) / 2))
                if x == xa or x == xb:
                    break
            else:
                break  # no representable progress (a rate at 1, say)
        fx = f(x)
        last = (math.log(xa), fa)
        if fx <= 0.0:
            xa, fa = x, fx
            side = side + 1 if side > 0 else 1  # > 0: the unsafe end b was kept (side times)
        else:
            xb, fb = x, fx
            side = side - 1 if side < 0 else -1
    return xa


def noise_multiplier(target_epsilon: Any, target_delta: Any, sample_rate: Any = None, *, steps: Any = None,
                     epochs: Any = None, batch_size: Any = None, dataset_size: Any = None,
                     method: str | None = None, group_size: Any = 1) -> Answer:
    """The smallest noise multiplier σ whose DP-SGD run is (``target_epsilon``, ``target_delta``)-DP.

    The answer is on the safe side: :func:`epsilon` (same ``method``) at the returned σ is ≤ the
    target — checked before returning. On the RDP route it is within a relative 10⁻⁹ or so of
    the smallest such σ (Newton's method on the exact curve); when the PLD route is tighter
    (``method=None`` with the PLD engine installed) σ is lowered from the RDP answer by a
    bracketed bisection on the PLD bound, to a relative 10⁻⁴.

    Args:
        target_epsilon: ε ∈ (0, ∞).
        target_delta: δ ∈ (0, 1).
        sample_rate: Poisson sampling rate q ∈ (0, 1] (see :func:`epsilon` for the schedule).
        steps: number of steps T (or give ``epochs``).
        epochs: number of epochs (T = ⌈epochs/q⌉).
        batch_size: expected batch size (with ``dataset_size``, instead of ``sample_rate``).
        dataset_size: number of examples n (with ``batch_size``).
        method: ``None`` (tightest route), ``"rdp"`` or ``"pld"``.
        group_size: k ≥ 1, a person with up to k examples is the unit (see :func:`epsilon`).

    Returns:
        :class:`Answer` (σ), with ``achieved`` the ε it reaches.

    Raises:
        DomainError: out-of-domain values, a schedule that does not add up, or a target that
            needs σ > 10¹².

    Examples:
        >>> s = noise_multiplier(3.0, 1e-5, 0.01, steps=10_000, method="rdp")
        >>> round(s, 6), s.achieved <= 3.0
        (1.661855, True)
    """
    method = _check_method(method)
    eps, dlt = _check_targets(target_epsilon, target_delta)
    s = schedule(sample_rate, steps=steps, epochs=epochs, batch_size=batch_size, dataset_size=dataset_size)
    q, t = s.sample_rate, s.steps
    assert t is not None
    k = _group_size(group_size, dataset_size)
    if k > 1:
        return _sigma_group(eps, dlt, q, t, k, method)
    engine = _pld_engine(method)
    seen: dict[float, Answer] = {}

    def rdp_meets(s_: float) -> bool:
        # verified exactly as the user will check it: the public (rounded-up) ε
        e, a = _eps_rdp(q, s_, t, dlt)
        seen[s_] = Answer(e, _RDP_METHOD, "upper bound on ε", witness=a)
        return e <= eps

    def meets(s_: float) -> bool:
        seen[s_] = _eps_best(q, s_, t, dlt, method, engine)
        return float(seen[s_]) <= eps

    def rdp_of(s_: float) -> float:
        return _eps_rdp(q, s_, t, dlt)[0]

    sigma = sg.dpsgd_sigma(q, t, eps, dlt, check=rdp_meets)  # the RDP answer: fast, tight
    if engine is not None:
        if method == "pld":
            while not meets(sigma):  # the PLD bound may exceed RDP's where RDP is tight
                sigma *= 1.05
            sigma = _pld_refine(meets, seen, eps, sigma, -1.0, False, rdp=rdp_of, floor=sg.SIGMA_FLOOR)
        elif meets(sigma) and seen[sigma].method in _NUMERIC_METHODS:
            sigma = _pld_refine(meets, seen, eps, sigma, -1.0, False, rdp=rdp_of, floor=sg.SIGMA_FLOOR)
    achieved = seen[sigma] if sigma in seen else _eps_best(q, sigma, t, dlt, method, engine)
    return Answer(sigma, achieved.method, "σ at or above the smallest that meets the target", achieved=float(achieved))


def steps(target_epsilon: Any, target_delta: Any, noise_multiplier: Any, sample_rate: Any = None, *,
          batch_size: Any = None, dataset_size: Any = None, method: str | None = None,
          group_size: Any = 1) -> Steps:
    """The largest number of steps whose DP-SGD run is (``target_epsilon``, ``target_delta``)-DP.

    Returns:
        :class:`Steps` (an ``int``; 0 if even one step exceeds the target), with ``achieved``.

    Examples:
        >>> t = steps(3.0, 1e-5, 1.1, 0.01, method="rdp")
        >>> int(t), epsilon(1.1, 0.01, steps=int(t), delta=1e-5, method="rdp") <= 3.0
        (3132, True)
    """
    method = _check_method(method)
    eps, dlt = _check_targets(target_epsilon, target_delta)
    sigma = POSITIVE.check("noise_multiplier", noise_multiplier)
    q = schedule(sample_rate, batch_size=batch_size, dataset_size=dataset_size, need_steps=False).sample_rate
    k = _group_size(group_size, dataset_size)
    if k > 1:
        return _steps_group(eps, dlt, sigma, q, k, method)
    engine = _pld_engine(method)
    t = sg.dpsgd_steps(q, sigma, eps, dlt)
    achieved = 0.0
    while t > 0:
        achieved, _ = _eps_rdp(q, sigma, t, dlt)
        if achieved <= eps:
            break
        t -= 1
    used = _RDP_METHOD
    if engine is not None:
        seen: dict[float, Answer] = {}

        def meets(x: float) -> bool:
            seen[x] = _eps_best(q, sigma, int(x), dlt, method, engine)
            return float(seen[x]) <= eps

        start = float(max(t, 1))
        while start > 1 and not meets(start):  # only on method="pld": RDP's t meets otherwise
            start = float(max(1, math.floor(start / 2)))
        if not meets(start):
            return Steps(0, seen[start].method, "the largest number of steps that meets the target", achieved=0.0)
        if seen[start].method in _NUMERIC_METHODS:
            t = int(_pld_refine(meets, seen, eps, start, +1.0, True,
                                rdp=lambda x: _eps_rdp(q, sigma, max(1, int(x)), dlt)[0]))
            achieved, used = float(seen[float(t)]), seen[float(t)].method
    return Steps(t, used, "the largest number of steps that meets the target", achieved=achieved)


def sample_rate(target_epsilon: Any, target_delta: Any, noise_multiplier: Any, *, steps: Any,
                method: str | None = None) -> Answer:
    """The largest Poisson sampling rate whose DP-SGD run of ``steps`` steps meets the target.

    Multiply by the data set size and round down for the largest expected batch size.

    Returns:
        :class:`Answer` (q ∈ [0, 1]; 0 when no positive rate meets the target), with ``achieved``.

    Examples:
        >>> q = sample_rate(3.0, 1e-5, 1.1, steps=10_000, method="rdp")
        >>> epsilon(1.1, q, steps=10_000, delta=1e-5, method="rdp") <= 3.0
        True
    """
    method = _check_method(method)
    eps, dlt = _check_targets(target_epsilon, target_delta)
    sigma = POSITIVE.check("noise_multiplier", noise_multiplier)
    t = check_int("steps", steps, minimum=1)
    engine = _pld_engine(method)
    seen: dict[float, Answer] = {}

    def rdp_meets(q_: float) -> bool:
        e, a = _eps_rdp(q_, sigma, t, dlt)
        seen[q_] = Answer(e, _RDP_METHOD, "upper bound on ε", witness=a)
        return e <= eps

    def meets(q_: float) -> bool:
        seen[q_] = _eps_best(q_, sigma, t, dlt, method, engine)
        return float(seen[q_]) <= eps

    q = sg.dpsgd_rate(sigma, t, eps, dlt, check=rdp_meets)
    if engine is not None and q > 0.0:
        if method == "pld":
            while q > 1e-300 and not meets(q):
                q *= 0.5
        if q < 1.0 and meets(q) and seen[q].method in _NUMERIC_METHODS:
            q = _pld_refine(meets, seen, eps, q, +1.0, False, rdp=lambda x: _eps_rdp(min(x, 1.0), sigma, t, dlt)[0])
    achieved = 0.0
    used = _RDP_METHOD
    if q > 0.0:
        a_ = seen[q] if q in seen else _eps_best(q, sigma, t, dlt, method, engine)
        achieved, used = float(a_), a_.method
        if achieved > eps:  # pragma: no cover - the solvers return verified points or 0
            q, achieved = 0.0, 0.0
    return Answer(q, used, "rate at or below the largest that meets the target", achieved=achieved)


def plan(noise_multiplier: Any, sample_rate: Any = None, *, steps: Any = None, epochs: Any = None,
         batch_size: Any = None, dataset_size: Any = None) -> list[tuple[Any, int]]:
    """A DP-SGD schedule as a plan for ``Accountant(budget, plan=...)``: one phase of T steps of
    ``PoissonSubsampled(Gaussian(σ), q)``.

    Several phases are lists added together (``plan(1.1, 0.01, steps=500) + plan(0.9, 0.02,
    steps=300)``); each training step is then ``acct.spend(step_mechanism(σ, q))``. The words
    (rate, steps, epochs, batch and data set sizes) are those of :func:`schedule`.

    Returns:
        ``[(step_mechanism(σ, q), T)]``.

    Raises:
        DomainError: out-of-domain values, or a schedule that does not add up.

    Examples:
        >>> [(m == step_mechanism(1.1, 0.01), t) for m, t in plan(1.1, 0.01, steps=1000)]
        [(True, 1000)]
        >>> [t for _, t in plan(1.1, batch_size=256, dataset_size=60_000, epochs=3) + plan(0.9, 0.01, steps=50)]
        [704, 50]
    """
    sigma = POSITIVE.check("noise_multiplier", noise_multiplier)
    s = schedule(sample_rate, steps=steps, epochs=epochs, batch_size=batch_size, dataset_size=dataset_size)
    assert s.steps is not None
    return [(step_mechanism(sigma, s.sample_rate), s.steps)]


# ----------------------------------------------------------------------------------------------
# User level: a person with up to k examples (examples Poisson-sampled)
# ----------------------------------------------------------------------------------------------
def group_step(noise_multiplier: float, sample_rate: float, group_size: int) -> Any:
    """One DP-SGD step accounted for a person with up to ``group_size`` examples.

    ``PoissonSubsampled(Gaussian(σ), q).group(k)``: the person's examples are each sampled
    with probability q, so the step is the Binomial(k, q) mixture of Gaussians against the
    Gaussian (Ganesh 2024; :class:`renyi.sampling.subsampling.PoissonSubsampledGroup`).
    """
    return step_mechanism(noise_multiplier, sample_rate).group(group_size)


def _group_size(group_size: Any, dataset_size: Any) -> int:
    from renyi.sampling.subsampling import _check_group_size

    k = _check_group_size(group_size)
    if dataset_size is not None and not _is_array(dataset_size):
        n = check_int("dataset_size", dataset_size)
        if k > n:
            raise DomainError(f"group_size must be in [1, dataset_size = {n}]; got {k} (a person cannot "
                              "contribute more examples than the data set holds)", name="group_size", value=k)
    return k


def _group_answer(c: Any, unit: str, bound: str) -> Answer:
    return Answer(c.value, f"{c.method}; unit: {unit}", bound, witness=c.witness, lower=c.lower)


def _eps_group(q: float, sigma: float, t: int, dlt: float, k: int, method: str | None) -> Answer:
    """ε at δ of T group-level steps: the minimum over the routes ``method`` allows."""
    from renyi.accounting.routes import best_epsilon

    m = group_step(sigma, q, k)
    return _group_answer(best_epsilon(t * m, dlt, method), m.unit, "upper bound on ε")


def _delta_group(q: float, sigma: float, t: int, eps: float, k: int, method: str | None) -> Answer:
    from renyi.accounting.routes import best_delta

    m = group_step(sigma, q, k)
    c = best_delta(t * m, eps, method)
    return Answer(min(1.0, c.value), f"{c.method}; unit: {m.unit}", "upper bound on δ", witness=c.witness,
                  lower=c.lower)


def _sigma_group(eps: float, dlt: float, q: float, t: int, k: int, method: str | None) -> Answer:
    """The smallest σ (to a relative 10⁻⁴, on the safe side) meeting (ε, δ) for a person with k examples.

    The example-level σ is a lower end (a person with one example is one of the cases); from
    there σ grows by factors of 1.5 to a verified point, which :func:`_pld_refine` moves back
    toward the boundary, checking every point it returns.
    """
    seen: dict[float, Answer] = {}

    def meets(s_: float) -> bool:
        seen[s_] = _eps_group(q, s_, t, dlt, k, method)
        return float(seen[s_]) <= eps

    base = float(noise_multiplier(eps, dlt, q, steps=t, method="rdp" if method == "rdp" else None))
    sigma = base
    for _ in range(200):
        if meets(sigma):
            break
        sigma *= 1.5
    else:  # pragma: no cover - ε falls like 1/σ², 1.5²⁰⁰ covers every target
        raise DomainError(f"no noise multiplier up to {sigma:.3g} meets ε = {eps:g}", name="target_epsilon",
                          value=eps)
    if sigma > base:
        sigma = _pld_refine(meets, seen, eps, sigma, -1.0, False, floor=sg.SIGMA_FLOOR)
    a = seen[sigma]
    return Answer(sigma, a.method, "σ at or above the smallest that meets the target", achieved=float(a))


def _steps_group(eps: float, dlt: float, sigma: float, q: float, k: int, method: str | None) -> Steps:
    """The largest T meeting (ε, δ) for a person with k examples (verified)."""
    seen: dict[float, Answer] = {}

    def meets(x: float) -> bool:
        seen[x] = _eps_group(q, sigma, int(x), dlt, k, method)
        return float(seen[x]) <= eps

    what = "the largest number of steps that meets the target"
    # the example-level answer is an upper end: the group's ε is at least the example's
    start = float(max(1, int(steps(eps, dlt, sigma, q, method="rdp" if method == "rdp" else None))))
    while start > 1 and not meets(start):
        start = float(max(1, math.floor(start / 2)))
    if not meets(start):
        return Steps(0, seen[start].method, what, achieved=0.0)
    t = int(_pld_refine(meets, seen, eps, start, +1.0, True))
    return Steps(t, seen[float(t)].method, what, achieved=float(seen[float(t)]))
