"""The sampler-to-accountant contract with torch and Opacus: a real loop with renyi's batch
sampler, and the accountant reporting the ε of the sampler that ran (or refusing)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _peers import need

from renyi.batches import SamplerEvent
from renyi.errors import DomainError

pytestmark = [pytest.mark.optional, pytest.mark.filterwarnings("ignore:Secure RNG turned off")]

torch = need("torch")
need("opacus")

from opacus import PrivacyEngine  # noqa: E402

import renyi.integrations.opacus as ro  # noqa: E402  (registers "renyi")
from renyi.integrations.torch_samplers import AllocationBatchSampler, PoissonBatchSampler  # noqa: E402

N, T = 64, 8


def _collate(batch):  # accepts empty batches
    if not batch:
        return torch.zeros(0, 4), torch.zeros(0, dtype=torch.long)
    xs, ys = zip(*batch)
    return torch.stack(xs), torch.stack(ys)


def test_opacus_loop_with_allocation_sampler() -> None:
    """Train 2 epochs with random allocation; the attached accountant reports exactly the
    event's ε (the allocation analysis, not Poisson's)."""
    torch.manual_seed(0)
    x = torch.randn(N, 4)
    y = (x[:, 0] > 0).long()
    sampler = AllocationBatchSampler(N, steps=T, epochs=1, rng=np.random.default_rng(3))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_sampler=sampler,
                                         collate_fn=_collate)
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    engine = PrivacyEngine(accountant="renyi")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model, opt, loader = engine.make_private(module=model, optimizer=opt, data_loader=loader,
                                                 noise_multiplier=1.3, max_grad_norm=1.0, poisson_sampling=False)
    engine.accountant.attach(sampler)
    loss_fn = torch.nn.CrossEntropyLoss()
    for _ in range(2):
        for xb, yb in loader:
            opt.zero_grad()
            if len(xb):
                loss_fn(model(xb), yb).backward()
            opt.step()
    ev = sampler.event
    assert (ev.scheme, ev.steps, ev.epochs) == ("allocation", 2 * T, 2)
    assert engine.get_epsilon(1e-5) == pytest.approx(ev.epsilon(1.3, delta=1e-5), rel=1e-12)


def test_accountant_refuses_gradient_accumulation() -> None:
    """Counting one step per 4 accumulated batches disagrees with the sampler: an error."""
    acc = ro.RenyiAccountant()
    acc.attach(SamplerEvent("poisson", 6000, 400, 0.01))
    for _ in range(100):
        acc.step(noise_multiplier=1.0, sample_rate=0.01)
    with pytest.raises(DomainError, match="accumulation over 4"):
        acc.get_epsilon(1e-5)


def test_accountant_refuses_rate_from_len_sampler() -> None:
    """A weighted sampler's rate taken as 1/len(sampler) disagrees with the sampler's rate."""
    s = PoissonBatchSampler(1000, 0.02, steps=10, rng=np.random.default_rng(0))
    list(s)
    acc = ro.RenyiAccountant()
    acc.attach(s)
    for _ in range(10):
        acc.step(noise_multiplier=1.0, sample_rate=1 / len(s))
    with pytest.raises(DomainError, match="len\\(sampler\\)"):
        acc.get_epsilon(1e-5)


def test_accountant_refuses_changed_sigma() -> None:
    acc = ro.RenyiAccountant()
    acc.attach(SamplerEvent("poisson", 6000, 20, 0.01))
    for s in [1.0] * 10 + [0.8] * 10:
        acc.step(noise_multiplier=s, sample_rate=0.01)
    with pytest.raises(DomainError, match="noise multiplier changed"):
        acc.get_epsilon(1e-5)


def test_accountant_agrees_exactly() -> None:
    ev = SamplerEvent("truncated_poisson", 6000, 50, 0.01, max_batch=120)
    acc = ro.RenyiAccountant()
    acc.attach(ev)
    for _ in range(50):
        acc.step(noise_multiplier=1.1, sample_rate=0.01)
    assert acc.get_epsilon(1e-5) == ev.epsilon(1.1, delta=1e-5)
