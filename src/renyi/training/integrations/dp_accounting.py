"""renyi as a dp-accounting ``PrivacyAccountant`` (for JAX and TensorFlow Privacy users).

::

    from dp_accounting import dp_event
    from renyi.training.integrations.dp_accounting import RenyiAccountant

    step = dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.1))
    acct = RenyiAccountant()               # add/remove neighbours, like dp-accounting's default
    acct.compose(step, 1000)
    acct.get_epsilon(1e-5)                 # ≤ dp-accounting's RdpAccountant

The events are read by :func:`renyi.from_dp_event` (see there for the traps it handles). Every
composed event is kept as a renyi mechanism or guarantee with its count (consecutive equal
events merged, so composing one step at a time stays cheap), and ``get_epsilon`` /
``get_delta`` compose them and answer by renyi's tightest route — for DP-SGD the exact
Poisson-subsampled Gaussian curve with the order optimised continuously.

Neighbouring relations: ``ADD_OR_REMOVE_ONE`` (default; Poisson sampling) and
``REPLACE_ONE`` (sampling without replacement, randomized response). ``REPLACE_SPECIAL`` is not
supported (renyi has no analyses stated under it).
"""

from __future__ import annotations

from typing import Any

from dp_accounting import dp_event as _dp_event
from dp_accounting.privacy_accountant import NeighboringRelation, PrivacyAccountant

from renyi.training.dp_events import UnsupportedDpEventError, from_dp_event
from renyi.core.errors import RenyiError

__all__ = ["RenyiAccountant"]

_RELATIONS = {
    NeighboringRelation.ADD_OR_REMOVE_ONE: "add_remove",
    NeighboringRelation.REPLACE_ONE: "replace_one",
}


class RenyiAccountant(PrivacyAccountant):
    """A dp-accounting ``PrivacyAccountant`` whose answers come from renyi.

    Args:
        neighboring_relation: ``NeighboringRelation.ADD_OR_REMOVE_ONE`` (default) or
            ``NeighboringRelation.REPLACE_ONE``.

    Raises:
        ValueError: for ``REPLACE_SPECIAL`` (or anything else).
    """

    def __init__(self, neighboring_relation: NeighboringRelation = NeighboringRelation.ADD_OR_REMOVE_ONE) -> None:
        if neighboring_relation not in _RELATIONS:
            raise ValueError(f"neighboring_relation must be ADD_OR_REMOVE_ONE or REPLACE_ONE; got "
                             f"{neighboring_relation!r}")
        super().__init__(neighboring_relation)
        self._relation = _RELATIONS[neighboring_relation]
        self._parts: list[tuple[Any, int]] = []
        #: the (ε, δ) pairs answered for the current composition (each a valid guarantee)
        self._answers: list[tuple[float, float]] = []

    def _maybe_compose(self, event: _dp_event.DpEvent, count: int,
                       do_compose: bool) -> PrivacyAccountant.CompositionErrorDetails | None:
        try:
            item = from_dp_event(event, neighbouring=self._relation)
        except UnsupportedDpEventError as exc:
            return self.CompositionErrorDetails(invalid_event=exc.event, error_message=str(exc))
        except RenyiError as exc:
            return self.CompositionErrorDetails(invalid_event=event, error_message=str(exc))
        if do_compose and count > 0:
            parts = self._parts
            if parts and parts[-1][0] == item:
                parts[-1] = (item, parts[-1][1] + count)
            else:
                parts.append((item, count))
            self._answers.clear()
        return None

    def _composition(self) -> Any:
        from renyi.guarantees.composition import compose
        from renyi.guarantees import PureDP

        items = [g if n == 1 else g.compose(n) for g, n in self._parts]
        if not items:
            return PureDP(0.0)
        return items[0] if len(items) == 1 else compose(*items)

    # Consistency of the two questions: every answer is an (ε, δ) guarantee of the same
    # composition, and δ(ε) is non-increasing, so an earlier answer (ε_i, δ_i) bounds δ at any
    # ε ≥ ε_i by δ_i and ε at any δ ≥ δ_i by ε_i. Using them makes the round trips
    # get_delta(get_epsilon(δ)) ≤ δ and get_epsilon(get_delta(ε)) ≤ ε hold exactly, whatever
    # grid each question's numerical answer came from (each is valid on its own, but two
    # certified brackets can disagree in the last digits).
    def get_epsilon(self, target_delta: float) -> float:
        """An upper bound on ε at ``target_delta`` for everything composed so far."""
        eps = float(self._composition().epsilon(target_delta))
        eps = min([eps] + [e for e, d in self._answers if d <= target_delta])
        self._remember(eps, float(target_delta))
        return eps

    def get_delta(self, target_epsilon: float) -> float:
        """An upper bound on δ at ``target_epsilon`` for everything composed so far."""
        delta = float(self._composition().delta(target_epsilon))
        delta = min([delta] + [d for e, d in self._answers if e <= target_epsilon])
        self._remember(float(target_epsilon), delta)
        return delta

    def _remember(self, eps: float, delta: float) -> None:
        self._answers.append((eps, delta))
        del self._answers[:-64]  # the latest answers (a training loop asks at every step)
