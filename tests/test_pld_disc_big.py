"""A step too large for the discretisation cache is kept alone for its own direction, so the
optimistic discretisation asked next on the same grid reuses the pessimistic one instead of
rebuilding it (issue #26, speed)."""
import pytest

import renyi.accounting.pld.distribution as dist
from renyi.accounting.pld._profiles import _gaussian


def test_oversized_step_is_not_rediscretised(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {"full": 0, "lower": 0}
    full, lower = dist.discretise_step, dist.discretise_lower_step

    def spy_full(*a, **k):  # type: ignore[no-untyped-def]
        calls["full"] += 1
        return full(*a, **k)

    def spy_lower(*a, **k):  # type: ignore[no-untyped-def]
        calls["lower"] += 1
        return lower(*a, **k)

    monkeypatch.setattr(dist, "discretise_step", spy_full)
    monkeypatch.setattr(dist, "discretise_lower_step", spy_lower)
    monkeypatch.setattr(dist, "_DISC_BUDGET", 10)  # every step is "too large"
    dist._DISC.clear()
    profiles = [(_gaussian(1.0), 3)]
    up1, _ = dist._discretise_all(profiles, 0.01, -40.0, lower=False)
    up2, low = dist._discretise_all(profiles, 0.01, -40.0)
    assert calls == {"full": 1, "lower": 1}
    assert not dist._DISC
    # the same answer as building both afresh
    dist._DISC_BIG.clear()
    up3, low3 = dist._discretise_all(profiles, 0.01, -40.0)
    assert calls["full"] == 2
    assert [s.log_mass.tobytes() for s, _ in up2] == [s.log_mass.tobytes() for s, _ in up3]
    assert [s.log_mass.tobytes() for s, _ in low] == [s.log_mass.tobytes() for s, _ in low3]
    dist._DISC_BIG.clear()
