"""The sampler check on by default (issue #23): real Opacus runs of each kind of loader.

* Poisson (Opacus's default): ε is the Poisson-subsampled Gaussian's.
* ``poisson_sampling=False`` with a plain shuffled DataLoader: refused before training.
* ``poisson_sampling=False`` with renyi's AllocationBatchSampler: ε is random allocation's.
"""

from __future__ import annotations

import pytest
from _peers import need

from renyi import dpsgd
from renyi.core.errors import DomainError

pytestmark = [pytest.mark.optional, pytest.mark.filterwarnings("ignore:Secure RNG turned off"),
              pytest.mark.filterwarnings("ignore::UserWarning")]

torch = need("torch")
need("opacus")

from opacus import PrivacyEngine  # noqa: E402

import renyi.integrations.opacus  # noqa: E402,F401  (registers "renyi")
from renyi.integrations.torch_samplers import AllocationBatchSampler  # noqa: E402

N, T, SIGMA = 64, 8, 1.0  # 8 batches per epoch


def _data():
    torch.manual_seed(0)
    x = torch.randn(N, 4)
    y = (x[:, 0] > 0).long()
    return torch.utils.data.TensorDataset(x, y)


def _run(loader, *, poisson_sampling: bool, epochs: int = 1):
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    engine = PrivacyEngine(accountant="renyi")
    model, opt, loader = engine.make_private(module=model, optimizer=opt, data_loader=loader,
                                             noise_multiplier=SIGMA, max_grad_norm=1.0,
                                             poisson_sampling=poisson_sampling)
    loss_fn = torch.nn.CrossEntropyLoss()
    steps = 0
    for _ in range(epochs):
        for xb, yb in loader:
            opt.zero_grad()
            if len(xb):
                loss_fn(model(xb), yb).backward()
            opt.step()
            steps += 1
    return engine, steps


def _collate(batch):
    if not batch:
        return torch.zeros(0, 4), torch.zeros(0, dtype=torch.long)
    return torch.utils.data.default_collate(batch)


def test_poisson_run_bills_poisson() -> None:
    loader = torch.utils.data.DataLoader(_data(), batch_size=N // T)
    engine, steps = _run(loader, poisson_sampling=True)
    e = engine.get_epsilon(1e-5)
    assert e == pytest.approx(float(dpsgd.epsilon(SIGMA, 1.0 / T, steps=steps, delta=1e-5)), rel=1e-9)


def test_plain_shuffled_loader_is_refused_before_training() -> None:
    loader = torch.utils.data.DataLoader(_data(), batch_size=N // T, shuffle=True)
    model = torch.nn.Linear(4, 2)
    before = [p.detach().clone() for p in model.parameters()]
    engine = PrivacyEngine(accountant="renyi")
    with pytest.raises(DomainError, match="poisson_sampling=False") as info:
        engine.make_private(module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
                            data_loader=loader, noise_multiplier=SIGMA, max_grad_norm=1.0,
                            poisson_sampling=False)
    assert "AllocationBatchSampler" in str(info.value)  # the fix is named
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))  # nothing trained
    assert len(engine.accountant) == 0


def test_allocation_sampler_bills_allocation() -> None:
    sampler = AllocationBatchSampler(N, steps=T)
    loader = torch.utils.data.DataLoader(_data(), batch_sampler=sampler, collate_fn=_collate)
    engine, steps = _run(loader, poisson_sampling=False, epochs=2)
    assert steps == 2 * T
    e = engine.get_epsilon(1e-5)
    expected = dpsgd.epsilon(SIGMA, 1.0 / T, steps=steps, delta=1e-5, sampling="allocation")
    assert e == pytest.approx(float(expected), rel=1e-6)
    poisson = float(dpsgd.epsilon(SIGMA, 1.0 / T, steps=steps, delta=1e-5))
    assert e < poisson  # fixed-size batches are billed their own (smaller, valid) ε


def test_other_accountants_untouched() -> None:
    loader = torch.utils.data.DataLoader(_data(), batch_size=N // T, shuffle=True)
    model = torch.nn.Linear(4, 2)
    engine = PrivacyEngine(accountant="rdp")
    engine.make_private(module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
                        data_loader=loader, noise_multiplier=SIGMA, max_grad_norm=1.0, poisson_sampling=False)


def test_make_private_with_epsilon_calibrates_for_the_allocation_sampler() -> None:
    """σ is calibrated for the sampler that runs (random allocation over the planned epochs),
    not as if Poisson: the run then meets the target, and needs less noise than Poisson."""
    target, epochs = 4.0, 2
    sampler = AllocationBatchSampler(N, steps=T)
    loader = torch.utils.data.DataLoader(_data(), batch_sampler=sampler, collate_fn=_collate)
    model = torch.nn.Linear(4, 2)
    engine = PrivacyEngine(accountant="renyi")
    model, opt, loader = engine.make_private_with_epsilon(
        module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1), data_loader=loader,
        target_epsilon=target, target_delta=1e-5, epochs=epochs, max_grad_norm=1.0, poisson_sampling=False)
    sigma = opt.noise_multiplier
    for _ in range(epochs):
        for xb, yb in loader:
            opt.zero_grad()
            if len(xb):
                torch.nn.functional.cross_entropy(model(xb), yb).backward()
            opt.step()
    e = engine.get_epsilon(1e-5)
    assert e <= target
    assert e > 0.98 * target  # calibrated for this run, not for another sampler
    alloc = float(dpsgd.epsilon(sigma, 1.0 / T, epochs=epochs, delta=1e-5, sampling="allocation"))
    assert alloc <= target
    poisson_sigma = float(dpsgd.noise_multiplier(target, 1e-5, 1.0 / T, epochs=epochs))
    assert sigma < poisson_sigma
