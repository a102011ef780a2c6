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

User level: with ``group_size = k`` (the attribute, or the argument of ``get_epsilon`` /
``get_privacy_spent`` / :func:`get_noise_multiplier`) the unit is a person with up to k
examples, each example still Poisson-sampled: every DP-SGD step is accounted as
``PoissonSubsampled(Gaussian(σ), q).group(k)`` (the tight Binomial mixture, see
:func:`renyi.dpsgd.epsilon`)::

    engine.accountant.group_size = 5
    engine.get_epsilon(1e-5)          # ε for a person with up to 5 examples

Poisson sampling: these numbers hold when each batch is drawn by Poisson sampling (Opacus's
default ``poisson_sampling=True``). With ``poisson_sampling=False`` (shuffled fixed-size
batches) they are not a guarantee; see ``docs/dpsgd.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import opacus.privacy_engine as _engine
from opacus.accountants import IAccountant, register_accountant

from renyi.accounting import dpsgd

__all__ = ["RenyiAccountant", "get_noise_multiplier", "MECHANISM"]

#: The name the accountant is registered under.
MECHANISM = "renyi"


def _check_history(history: Any) -> list[tuple[Any, Any, int]]:
    if not isinstance(history, list):
        raise ValueError(f"the accountant history must be a list of (noise_multiplier, sample_rate, steps); "
                         f"got {type(history).__name__}")
    out = []
    for entry in history:
        if not (isinstance(entry, (tuple, list)) and len(entry) == 3):
            raise ValueError(f"each history entry must be (noise_multiplier, sample_rate, steps); got {entry!r}")
        out.append((entry[0], entry[1], int(entry[2])))
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
        else:
            if noise_multiplier is None or sample_rate is None:
                raise TypeError("step needs noise_multiplier and sample_rate (or event=...)")
            key = (noise_multiplier, sample_rate)
            h = self.history
            if not (h and h[-1][0] == noise_multiplier and h[-1][1] == sample_rate):
                dpsgd.step_mechanism(noise_multiplier, sample_rate)  # validates both (once per segment)
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
    return float(dpsgd.noise_multiplier(target_epsilon, target_delta, sample_rate, steps=steps, epochs=epochs,
                                        group_size=group_size))


def _dispatching(original: Callable[..., float]) -> Callable[..., float]:
    def get_noise_multiplier_(*args: Any, **kwargs: Any) -> float:
        if kwargs.get("accountant") == MECHANISM:
            return get_noise_multiplier(**kwargs)
        return original(*args, **kwargs)

    get_noise_multiplier_.__wrapped__ = original  # type: ignore[attr-defined]
    get_noise_multiplier_.__doc__ = original.__doc__
    return get_noise_multiplier_


def _register() -> None:
    try:
        register_accountant(MECHANISM, RenyiAccountant)
    except ValueError:  # already registered (module reloaded): keep one, ours
        register_accountant(MECHANISM, RenyiAccountant, force=True)
    # PrivacyEngine.make_private_with_epsilon calls the name imported into its module.
    current = _engine.get_noise_multiplier
    if not hasattr(current, "__wrapped__"):
        _engine.get_noise_multiplier = _dispatching(current)


_register()
