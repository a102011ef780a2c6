"""The Gaussian profile's branches are evaluated only where kept (issue #26, speed): the values
must equal a plain evaluation of every branch everywhere followed by selection."""
import numpy as np

from renyi.core import _logmath as lm
from renyi.core._lazy import special


def _gap_reference(u: np.ndarray, d: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        ex = special.erfcx(u)
        near = np.where(d < 1e-3 * np.maximum(np.abs(u), 1.0), lm._erfcx_gap_taylor(u, d, ex), ex - special.erfcx(u + d))
        return np.where(u >= lm._ERFCX_ASYMPTOTIC, lm._erfcx_gap_asymptotic(np.maximum(u, lm._ERFCX_ASYMPTOTIC), d), near)


def _ldg_reference(eps: np.ndarray, mu: float) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        la = special.log_ndtr(mu / 2.0 - eps / mu)
        lb = special.log_ndtr(-mu / 2.0 - eps / mu)
        out = np.asarray(la + lm.log1mexp(np.minimum(eps + lb - la, 0.0)), dtype=np.float64)
        a = mu / 2.0 - eps / mu
        far = (a < 0.0) & np.isfinite(a)
        af = a[far]
        out[far] = -0.5 * af * af - np.log(2.0) + np.log(_gap_reference(-af / np.sqrt(2.0), np.full(af.size, mu / np.sqrt(2.0))))
    return np.where(np.isnan(out), -np.inf, out)


def test_erfcx_gap_and_gaussian_profile_match_unmasked_evaluation() -> None:
    rng = np.random.default_rng(26)
    for _ in range(30):
        n = int(rng.integers(70, 600))
        u = np.concatenate([rng.uniform(-10.0, 60.0, n), [25.0, np.inf, np.nan]])
        d = 10 ** rng.uniform(-8.0, 1.0, u.size)
        assert np.array_equal(lm.erfcx_gap(u, d), _gap_reference(u, d), equal_nan=True)
        eps = np.concatenate([rng.uniform(-5.0, 5.0, n), 10 ** rng.uniform(-8.0, 4.0, n), [0.0, np.inf, -np.inf]])
        mu = float(10 ** rng.uniform(-5.0, 1.5))
        assert np.array_equal(lm.log_delta_gaussian(eps, mu), _ldg_reference(eps, mu), equal_nan=True)
    assert np.shape(lm.erfcx_gap(np.array(30.0), 0.1)) == ()
    assert isinstance(lm.log_delta_gaussian(1.0, 0.5), float)
