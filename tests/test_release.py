"""Releasing noisy answers: shapes, dtypes, validation, and statistical sanity of the noise.

The Kolmogorov–Smirnov and moment checks use fixed seeds, so they are deterministic; each
is set at a false-alarm rate of at most 1e-3 for a fresh seed (p-value threshold 1e-3, or a
5-standard-error band, two-sided ≈ 6e-7).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import special, stats

from renyi._release import add_noise, as_int_array
from renyi.errors import DomainError
from renyi.mechanisms import DiscreteGaussian, DiscreteLaplace, Gaussian, Laplace

P_MIN = 1e-3


def zero_noise(rng, size):
    return 0.0 if size is None else np.zeros(size)


class TestAddNoise:
    def test_scalar_gives_float(self):
        """Python and numpy scalars (and 0-d arrays) give a Python float."""
        for v in (3, 3.5, np.float32(2.0), np.int64(4), np.array(1.5)):
            out = add_noise(v, zero_noise, np.random.default_rng(0))
            assert type(out) is float and out == float(v)

    def test_array_keeps_shape_and_dtype(self):
        """Arrays keep their shape (including empty and 0-length axes) and become float64."""
        for shape in [(3,), (2, 3), (0,), (2, 0, 4), (1, 1)]:
            v = np.ones(shape, dtype=np.int32)
            out = add_noise(v, zero_noise, np.random.default_rng(0))
            assert out.shape == shape and out.dtype == np.float64

    def test_list_gives_array(self):
        """Lists (nested) become arrays of their shape."""
        out = add_noise([[1, 2, 3], [4, 5, 6]], zero_noise, np.random.default_rng(0))
        assert isinstance(out, np.ndarray) and out.shape == (2, 3)

    @pytest.mark.parametrize("bad", [float("nan"), math.inf, -math.inf, [1.0, float("nan")], np.array([[0.0, np.inf]])])
    def test_non_finite_value(self, bad):
        """NaN/inf in the query answer is a DomainError that says so."""
        with pytest.raises(DomainError, match="value must be finite; got"):
            add_noise(bad, zero_noise, None)

    @pytest.mark.parametrize("bad", ["3", b"x", None, True, [1, "a"], 1 + 2j])
    def test_non_numeric_value(self, bad):
        """Strings, bools, None and complex numbers are a TypeError."""
        with pytest.raises(TypeError):
            add_noise(bad, zero_noise, None)

    def test_bad_rng(self):
        """rng must be None or a Generator (an int seed is refused: security must be a visible choice)."""
        with pytest.raises(TypeError, match="rng"):
            add_noise(1.0, zero_noise, 42)

    def test_integer_mode(self):
        """Integer mechanisms: ints and whole floats accepted (int64 / int out), fractions refused."""
        def one(rng, size):
            return 1 if size is None else np.ones(size, np.int64)

        assert add_noise(3, one, None, integer=True) == 4
        assert type(add_noise(np.int32(3), one, None, integer=True)) is int
        out = add_noise(np.array([1.0, 2.0]), one, None, integer=True)
        assert out.dtype == np.int64 and out.tolist() == [2, 3]
        with pytest.raises(DomainError, match="integers"):
            add_noise([1.5], one, None, integer=True)
        with pytest.raises(DomainError, match="finite"):
            add_noise([float("nan")], one, None, integer=True)
        with pytest.raises(DomainError):
            as_int_array([2**70])
        with pytest.raises(TypeError):
            add_noise(True, one, None, integer=True)


class TestMechanismRelease:
    def test_gaussian_ks(self):
        """Gaussian release minus the value is N(0, σ²) (KS, fixed seed)."""
        m = Gaussian(2.5)
        out = m.release(np.full(20_000, 10.0), rng=np.random.default_rng(123))
        assert stats.kstest(out - 10.0, stats.norm(scale=2.5).cdf).pvalue > P_MIN

    def test_laplace_ks(self):
        """Laplace release minus the value is Lap(b) (KS, fixed seed)."""
        m = Laplace(0.7)
        out = m.release(np.zeros((100, 200)), rng=np.random.default_rng(321))
        assert out.shape == (100, 200)
        assert stats.kstest(out.ravel(), stats.laplace(scale=0.7).cdf).pvalue > P_MIN

    def test_secure_default_ks(self):
        """The default (secure) generator also gives the right law (random seed: false-alarm rate 1e-3)."""
        out = Laplace(1.0).release(np.zeros(5000))
        assert stats.kstest(out, stats.laplace().cdf).pvalue > P_MIN

    def test_discrete_gaussian_moments(self):
        """Discrete Gaussian noise has the right variance (5 standard errors) and an int64 dtype."""
        m = DiscreteGaussian(Fraction(5, 2), vector=True)
        out = m.release(np.zeros(50_000, np.int64), rng=np.random.default_rng(9))
        assert out.dtype == np.int64
        x = np.arange(-60, 61)
        w = np.exp(-x * x / (2 * 6.25))
        w /= w.sum()
        var = float(np.sum(w * x * x))
        se = math.sqrt((float(np.sum(w * x**4)) - var**2) / out.size)
        assert abs(np.mean(out.astype(float) ** 2) - var) < 5 * se

    def test_discrete_laplace_chi2(self):
        """Discrete Laplace noise matches its pmf (χ² on |z| ≤ 8 plus the tails, fixed seed)."""
        m = DiscreteLaplace(Fraction(3, 2), vector=True)
        out = m.release(np.zeros(30_000, np.int64), rng=np.random.default_rng(4))
        x = np.arange(-8, 9)
        lp = -np.abs(np.arange(-200, 201)) / 1.5
        p_all = np.exp(lp - special.logsumexp(lp))
        p = p_all[192:209]
        obs = np.array([np.sum(out == k) for k in x] + [np.sum(np.abs(out) > 8)])
        exp = np.concatenate([p, [1 - p.sum()]]) * out.size
        assert stats.chisquare(obs, exp).pvalue > P_MIN

    def test_scalar_discrete_release(self):
        """Scalar integer queries give a Python int."""
        assert type(DiscreteLaplace(2).release(7, rng=np.random.default_rng(0))) is int
        assert type(DiscreteGaussian(2).release(7.0, rng=np.random.default_rng(0))) is int
        with pytest.raises(DomainError, match="integers"):
            DiscreteLaplace(2).release(7.5)
