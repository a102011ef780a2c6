"""renyi as an Opacus accountant: ``PrivacyEngine(accountant="renyi")``.

Importing this module registers :class:`RenyiAccountant` with Opacus under the name
``"renyi"``::

    import renyi.integrations.opacus  # noqa: F401  (registers "renyi")
    from opacus import PrivacyEngine

    engine = PrivacyEngine(accountant="renyi")
    model, optimizer, loader = engine.make_private_with_epsilon(
        module=model, optimizer=optimizer, data_loader=loader,
        target_epsilon=3.0, target_delta=1e-5, epochs=10, max_grad_norm=1.0)
    ...
    engine.get_epsilon(1e-5)

The accountant keeps Opacus's history layout — a list of ``(noise_multiplier, sample_rate,
steps)`` tuples, consecutive equal steps merged — so checkpoints written by
``PrivacyEngine.save_checkpoint`` round-trip, and its ε is :func:`renyi.dpsgd.epsilon` for
the same history (the exact Poisson-subsampled Gaussian curve, order optimised continuously:
never above Opacus's own RDP accountant at the same settings).

``make_private_with_epsilon`` asks Opacus's ``get_noise_multiplier`` for σ; for
``accountant="renyi"`` that call is answered by :func:`renyi.dpsgd.noise_multiplier` (the
smallest σ meeting the target, checked on the safe side) instead of Opacus's bisection with
tolerance 0.01. Other accountants are left untouched.

Steps of mechanisms other than DP-SGD's can be recorded with ``step(event=...)``, where the
event is any renyi mechanism or guarantee of one step (for instance another sampling scheme);
such entries are stored as ``(event, None, steps)``.

**Declared plans.** The schedule can be declared up front and enforced against an (ε, δ)
budget in a durable ledger, billed at its PLD ε rather than the adaptive RDP filter's
(:mod:`renyi.budget.plan`)::

    model, optimizer, loader = engine.make_private_with_epsilon(..., target_epsilon=3.0,
                                                                target_delta=1e-5, epochs=10)
    engine.accountant.declare_plan(ledger="run.db")  # the schedule just calibrated

From then on every optimizer step is also spent in that :class:`renyi.Accountant`: steps of
the plan cost nothing more, a step off the plan (another σ or rate, or more steps than
declared) is refused before the parameters are updated, and the ledger restates the plan when
it is reopened (``renyi ledger show run.db``). ``declare_plan(budget, plan)`` declares any
other schedule (e.g. several phases: :func:`renyi.dpsgd.plan`).

The sampler check is on by default: ``make_private`` (and so ``make_private_with_epsilon``)
with ``accountant="renyi"`` looks at the batches that will run before any training step.

* ``poisson_sampling=True`` (Opacus's default): Opacus replaces the loader with its Poisson
  sampler, and ε is the Poisson-subsampled Gaussian's.
* ``poisson_sampling=False`` with a renyi batch sampler (``DataLoader(batch_sampler=...)`` of
  :mod:`renyi.integrations.torch_samplers`, e.g. ``AllocationBatchSampler``): the sampler is
  attached (:meth:`RenyiAccountant.attach`), and ε is that of what ran (random allocation by
  its PLD route; ``ShuffledBatchSampler`` without amplification). ``make_private_with_epsilon``
  calibrates σ for that sampler too (its planned ``epochs``), not for Poisson sampling.
* ``poisson_sampling=False`` with any other loader (a plain ``DataLoader``, shuffled or not):
  fixed-size shuffled batches have no amplification theorem, so the Poisson ε would not be a
  guarantee; ``make_private`` raises :class:`renyi.DomainError` naming the fix, before
  training.

User level: with ``group_size = k`` (the attribute, or the argument of ``get_epsilon`` /
``get_privacy_spent`` / :func:`get_noise_multiplier`) the unit is a person with up to k
examples, each example still Poisson-sampled: every DP-SGD step is accounted as
``PoissonSubsampled(Gaussian(σ), q).group(k)`` (the tight Binomial mixture, see
:func:`renyi.dpsgd.epsilon`)::

    engine.accountant.group_size = 5
    engine.get_epsilon(1e-5)          # ε for a person with up to 5 examples

"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any

import opacus.privacy_engine as _engine
from opacus.accountants import IAccountant, register_accountant

from renyi.accounting import dpsgd
from renyi.core._validation import check_int

__all__ = ["RenyiAccountant", "get_noise_multiplier", "check_loader", "MECHANISM"]

#: The name the accountant is registered under.
MECHANISM = "renyi"

# The last schedule calibrated by make_private_with_epsilon (through get_noise_multiplier), per
# thread: what declare_plan() declares when it is given no plan.
_CALIBRATED = threading.local()
# The renyi batch sampler whose run make_private_with_epsilon is calibrating (poisson_sampling
# False), per thread: get_noise_multiplier then calibrates σ for that sampler, not for Poisson.
_FOR_SAMPLER = threading.local()


def _check_history(history: Any) -> list[tuple[Any, Any, int]]:
    if not isinstance(history, list):
        raise ValueError(f"the accountant history must be a list of (noise_multiplier, sample_rate, steps); "
                         f"got {type(history).__name__}")
    out = []
    for entry in history:
        if not (isinstance(entry, (tuple, list)) and len(entry) == 3):
            raise ValueError(f"each history entry must be (noise_multiplier, sample_rate, steps); got {entry!r}")
        # a whole number of steps: int() would truncate 2.9 steps to 2 and bill fewer than ran
        out.append((entry[0], entry[1], check_int("history steps", entry[2], minimum=0)))
    return out


class RenyiAccountant(IAccountant):
    """An Opacus accountant (``IAccountant``) whose ε comes from renyi.

    ``history`` is a list of ``(noise_multiplier, sample_rate, steps)`` (Opacus's layout), or
    ``(event, None, steps)`` for steps recorded with ``step(event=...)``.
    """

    def __init__(self, group_size: int = 1) -> None:
        super().__init__()
        self.history: list[tuple[Any, Any, int]] = []
        self.sampler: Any = None
        #: the unit: a person with up to this many examples (1: one example)
        self.group_size = group_size
        #: the :class:`renyi.Accountant` that enforces a declared plan (:meth:`declare_plan`)
        self.accountant: Any = None

    def declare_plan(self, budget: Any = None, plan: Any = None, *, ledger: Any = None,
                     plan_delta: float | None = None, plan_reserve: int | None = None) -> Any:
        """Declare the training schedule as a plan, billed at its PLD ε against ``budget``.

        With no arguments after ``make_private_with_epsilon``: the schedule it calibrated
        (``dpsgd.plan(σ, q, epochs=...)``) against ``ApproxDP(target_epsilon, target_delta)``.
        From then on :meth:`step` also spends each step in a :class:`renyi.Accountant` with this
        plan (steps of the plan cost nothing more; a step off it is refused, nothing recorded).

        Args:
            budget: an ``ApproxDP(ε, δ)`` budget (default: the calibration's target).
            plan: any plan :class:`renyi.Accountant` takes (default: the calibrated schedule).
            ledger: where to record the steps (a path, a :class:`renyi.ledger.Ledger` or None).
            plan_delta: as in :class:`renyi.Accountant`.
            plan_reserve: as in :class:`renyi.Accountant`: on a ledger file, record the steps of
                the plan ahead in blocks of up to this many (one fsync per block, not per step).

        Returns:
            The :class:`renyi.Accountant`.

        Raises:
            renyi.DomainError: no plan given and none calibrated, or steps already recorded.
            renyi.BudgetExceededError: the plan does not fit the budget (nothing recorded).
        """
        from renyi.budget.accountant import Accountant
        from renyi.core.errors import DomainError
        from renyi.guarantees import ApproxDP

        if self.history:
            raise DomainError("declare the plan before the first step: a plan is declared before any spend "
                              f"({sum(n for _, _, n in _check_history(self.history))} step(s) already recorded)",
                              name="plan", value=None)
        cal = getattr(_CALIBRATED, "value", None)
        if plan is None or budget is None:
            if cal is None:
                raise DomainError("declare_plan() without a plan and a budget needs a make_private_with_epsilon "
                                  "call first (its calibrated schedule is the plan); give budget= and plan=",
                                  name="plan", value=None)
            sigma, q, steps, eps, delta = cal
            if plan is None:
                plan = dpsgd.plan(sigma, q, steps=steps)
            if budget is None:
                budget = ApproxDP(eps, delta)
        self.accountant = Accountant(budget, ledger, plan=plan, plan_delta=plan_delta, plan_reserve=plan_reserve)
        return self.accountant

    def attach(self, sampler: Any) -> None:
        """Account for the batch sampler that actually ran (the sampler-to-accountant contract).

        ``sampler`` is a renyi batch sampler (:mod:`renyi.integrations.torch_samplers` or
        :mod:`renyi.batches`) or its :class:`~renyi.batches.SamplerEvent`. From then on ε is that
        of the sampler's event (random allocation, truncated Poisson, shuffling, or Poisson),
        and the recorded steps must agree with it: the number of steps with the batches the
        sampler produced, every step's rate with the sampler's rate, and one noise multiplier
        throughout; otherwise ``get_epsilon`` raises :class:`renyi.DomainError`.
        """
        self.sampler = sampler

    def _event_epsilon(self, delta: float) -> tuple[float, float | None]:
        from renyi.sampling.batches import SamplerEvent
        from renyi.core.errors import DomainError

        event = self.sampler if isinstance(self.sampler, SamplerEvent) else self.sampler.event
        hist = _check_history(self.history)
        if any(b is None for _, b, _ in hist):
            raise DomainError("steps recorded with event=... cannot be checked against a sampler",
                              name="history", value=None)
        sigmas = {a for a, _, _ in hist}
        if len(sigmas) > 1:
            raise DomainError(f"the noise multiplier changed during the run ({sorted(sigmas)}); the sampler's "
                              "analysis needs one noise multiplier", name="noise_multiplier", value=sorted(sigmas))
        for _, q, _ in hist:
            event.check(sample_rate=q)
        event.check(steps=sum(n for _, _, n in hist))
        if not hist:
            return 0.0, None
        c = event.mechanism(next(iter(sigmas))).best_epsilon(delta)
        return float(c.value), c.witness

    def step(self, *, noise_multiplier: float | None = None, sample_rate: float | None = None,
             event: Any = None) -> None:
        """Record one step: DP-SGD's ``(noise_multiplier, sample_rate)``, or a renyi ``event``.

        Raises:
            renyi.DomainError: σ ≤ 0 or a rate outside (0, 1] (checked here, at the step, so a
                bad value is reported where it happened rather than at ``get_epsilon``).
        """
        if event is not None:
            if noise_multiplier is not None or sample_rate is not None:
                raise TypeError("step takes either noise_multiplier and sample_rate, or event, not both")
            key: tuple[Any, Any] = (event, None)
            if self.accountant is not None:
                self.accountant.spend(event)  # before the history: a refused step is not recorded
        else:
            if noise_multiplier is None or sample_rate is None:
                raise TypeError("step needs noise_multiplier and sample_rate (or event=...)")
            key = (noise_multiplier, sample_rate)
            h = self.history
            if getattr(self, "_step_key", None) != key:
                # validates both (once per segment); kept for the declared plan's spends
                self._step_mech = dpsgd.step_mechanism(noise_multiplier, sample_rate)
                self._step_key = key
            if self.accountant is not None:
                self.accountant.spend(self._step_mech)  # a step off the plan raises here, unrecorded
        h = self.history
        if h and h[-1][0] == key[0] and h[-1][1] == key[1]:
            h[-1] = (key[0], key[1], h[-1][2] + 1)
        else:
            h.append((key[0], key[1], 1))

    def _composition(self, group_size: int = 1) -> Any:
        from renyi.guarantees.composition import compose

        parts = []
        for a, b, n in _check_history(self.history):
            one = a if b is None else dpsgd.step_mechanism(a, b)
            if group_size > 1:
                # DP-SGD steps: the tight group-level mechanism; recorded events: their .group(k)
                one = one.group(group_size)
            parts.append(one if n == 1 else one.compose(n))
        return parts[0] if len(parts) == 1 else compose(*parts)

    def get_privacy_spent(self, *, delta: float, method: str | None = None,
                          group_size: int | None = None) -> tuple[float, float | None]:
        """(ε, witness order) spent so far at ``delta``: an upper bound on ε.

        ``method``: None (the tightest route), ``"rdp"`` or ``"pld"`` (see
        :func:`renyi.dpsgd.epsilon`). With a sampler attached (:meth:`attach`), the ε of the
        sampler's event (the method is then the tightest route for it). ``group_size``: the
        unit is a person with up to that many examples (default: the ``group_size``
        attribute, 1).
        """
        k = dpsgd._group_size(self.group_size if group_size is None else group_size, None)
        if self.sampler is not None:
            if k > 1:
                from renyi.core.errors import DomainError

                raise DomainError("group_size > 1 is accounted for Poisson-sampled steps; with a sampler attached "
                                  "use group_size = 1", name="group_size", value=k)
            return self._event_epsilon(delta)
        hist = _check_history(self.history)
        if not hist:
            return 0.0, None
        if len(hist) == 1 and hist[0][1] is not None:
            sigma, q, n = hist[0]
            e = dpsgd.epsilon(sigma, q, steps=n, delta=delta, method=method, group_size=k)
            assert isinstance(e, dpsgd.Answer)  # scalar arguments give one answer, not a sweep
            return float(e), e.witness
        from renyi.accounting.routes import best_epsilon

        c = best_epsilon(self._composition(k), delta, method)
        return float(c.value), c.witness

    def get_epsilon(self, delta: float, *args: Any, method: str | None = None, group_size: int | None = None,
                    **kwargs: Any) -> float:
        """An upper bound on ε spent so far at ``delta`` (0 before the first step); ``method``
        and ``group_size`` as in :meth:`get_privacy_spent`."""
        return self.get_privacy_spent(delta=delta, method=method, group_size=group_size)[0]

    def __len__(self) -> int:
        return len(self.history)

    @classmethod
    def mechanism(cls) -> str:
        return MECHANISM


def get_noise_multiplier(*, target_epsilon: float, target_delta: float, sample_rate: float,
                         epochs: float | None = None, steps: int | None = None, group_size: int = 1,
                         **kwargs: Any) -> float:
    """The smallest noise multiplier meeting (ε, δ) for Poisson-sampled DP-SGD (renyi's solver).

    Same keywords as Opacus's ``get_noise_multiplier``; ``epsilon_tolerance`` and the
    accountant name are accepted and ignored (the answer is exact to ~10⁻⁹, on the safe side).
    ``group_size``: the unit is a person with up to that many examples.
    """
    planned = getattr(_FOR_SAMPLER, "value", None)
    if planned is not None:
        # make_private_with_epsilon with a renyi batch sampler: σ for the batches that will run
        _CALIBRATED.value = None  # declare_plan() has no Poisson schedule to declare
        return _sampler_noise_multiplier(planned, target_epsilon, target_delta, epochs, steps, group_size)
    sigma = float(dpsgd.noise_multiplier(target_epsilon, target_delta, sample_rate, steps=steps, epochs=epochs,
                                         group_size=group_size))
    t = dpsgd.schedule(sample_rate, steps=steps, epochs=epochs).steps
    _CALIBRATED.value = (sigma, float(sample_rate), t, float(target_epsilon), float(target_delta))
    return sigma


def _sampler_noise_multiplier(event: Any, target_epsilon: float, target_delta: float, epochs: Any, steps: Any,
                              group_size: int) -> float:
    """The smallest σ (on the safe side) with which the run of ``event``'s sampler over
    ``epochs`` epochs (or ``steps`` steps) meets (ε, δ), by the sampler's own analysis (random
    allocation: its PLD route; shuffling: no amplification)."""
    import dataclasses

    from renyi.accounting.calibration import calibrate
    from renyi.core.errors import DomainError
    from renyi.guarantees import ApproxDP

    if check_int("group_size", group_size) != 1:
        raise DomainError("group_size > 1 is calibrated for Poisson-sampled steps; with a renyi batch sampler use "
                          "group_size = 1", name="group_size", value=group_size)
    t = event.steps_per_epoch
    if steps is None:
        if epochs is None:
            raise DomainError("epochs must be given to calibrate σ for a batch sampler", name="epochs", value=None)
        total = math.ceil(float(epochs) * t) if t else math.ceil(float(epochs) / event.sample_rate)
    else:
        total = check_int("steps", steps)
    run = dataclasses.replace(event, steps=int(total), noise_multiplier=None)
    eps, delta = float(target_epsilon), float(target_delta)
    # the RDP route first (fast); the billed ε (the tightest route, ≤ RDP's) meets the target
    # there too, so that σ is feasible; then a bisection on the billed ε down to 0.1 %
    hi = float(calibrate(lambda s: run.mechanism(s), ApproxDP(eps, delta), method="rdp").value)

    def ok(s: float) -> bool:
        return float(run.mechanism(s).best_epsilon(delta).value) <= eps

    # (small steps down: a small σ is a costly question for random allocation's PLD route)
    lo = hi * 0.85
    while ok(lo):
        hi, lo = lo, lo * 0.85
    while hi / lo > 1.001:
        mid = math.sqrt(lo * hi)
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _dispatching(original: Callable[..., float]) -> Callable[..., float]:
    def get_noise_multiplier_(*args: Any, **kwargs: Any) -> float:
        if kwargs.get("accountant") == MECHANISM:
            return get_noise_multiplier(**kwargs)
        return original(*args, **kwargs)

    get_noise_multiplier_.__wrapped__ = original  # type: ignore[attr-defined]
    get_noise_multiplier_.__doc__ = original.__doc__
    return get_noise_multiplier_


def _renyi_sampler(data_loader: Any) -> Any:
    """The renyi batch sampler driving ``data_loader``, or None."""
    from renyi.sampling.batches import SamplerEvent

    for cand in (getattr(data_loader, "batch_sampler", None), getattr(data_loader, "sampler", None)):
        ev = getattr(cand, "event", None)
        if isinstance(ev, SamplerEvent):
            return cand
    return None


def check_loader(accountant: Any, data_loader: Any, poisson_sampling: bool) -> None:
    """The sampler check of ``make_private`` (see the module docstring).

    Raises:
        renyi.DomainError: ``poisson_sampling=False`` with a loader that is not a renyi batch
            sampler (no valid ε could be reported for it).
    """
    from renyi.core.errors import DomainError

    if not isinstance(accountant, RenyiAccountant) or poisson_sampling:
        return
    sampler = _renyi_sampler(data_loader)
    if sampler is not None:
        accountant.attach(sampler)
        return
    raise DomainError(
        "poisson_sampling=False runs shuffled fixed-size batches, which no amplification theorem covers, so "
        "renyi cannot bill them as Poisson sampling; keep poisson_sampling=True, or pass "
        "DataLoader(dataset, batch_sampler=renyi.integrations.torch_samplers.AllocationBatchSampler(...)) "
        "(random allocation) or ShuffledBatchSampler (billed without amplification)",
        name="poisson_sampling", value=False)


def _checking(original: Callable[..., Any]) -> Callable[..., Any]:
    def make_private(self: Any, *args: Any, **kwargs: Any) -> Any:
        check_loader(getattr(self, "accountant", None), kwargs.get("data_loader"),
                     bool(kwargs.get("poisson_sampling", True)))
        return original(self, *args, **kwargs)

    make_private.__wrapped__ = original  # type: ignore[attr-defined]
    make_private.__doc__ = original.__doc__
    return make_private


def _calibrating(original: Callable[..., Any]) -> Callable[..., Any]:
    def make_private_with_epsilon(self: Any, *args: Any, **kwargs: Any) -> Any:
        sampler = None
        if isinstance(getattr(self, "accountant", None), RenyiAccountant) and not kwargs.get("poisson_sampling", True):
            sampler = _renyi_sampler(kwargs.get("data_loader"))
        _FOR_SAMPLER.value = None if sampler is None else sampler.event
        try:
            return original(self, *args, **kwargs)
        finally:
            _FOR_SAMPLER.value = None

    make_private_with_epsilon.__wrapped__ = original  # type: ignore[attr-defined]
    make_private_with_epsilon.__doc__ = original.__doc__
    return make_private_with_epsilon


def _register() -> None:
    try:
        register_accountant(MECHANISM, RenyiAccountant)
    except ValueError:  # already registered (module reloaded): keep one, ours
        register_accountant(MECHANISM, RenyiAccountant, force=True)
    # PrivacyEngine.make_private_with_epsilon calls the name imported into its module.
    current = _engine.get_noise_multiplier
    if not hasattr(current, "__wrapped__"):
        _engine.get_noise_multiplier = _dispatching(current)
    # the sampler check, before any training step (make_private_with_epsilon calls it too)
    mp = _engine.PrivacyEngine.make_private
    if not hasattr(mp, "__wrapped__"):
        _engine.PrivacyEngine.make_private = _checking(mp)
    # calibration for the sampler that will run (poisson_sampling=False with a renyi sampler)
    mpe = _engine.PrivacyEngine.make_private_with_epsilon
    if not hasattr(mpe, "__wrapped__"):
        _engine.PrivacyEngine.make_private_with_epsilon = _calibrating(mpe)


_register()
