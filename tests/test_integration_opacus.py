"""renyi inside Opacus: PrivacyEngine(accountant="renyi") against the real library.

torch is imported only here (it is slow to import); the model is tiny and trains a few steps.
"""

from __future__ import annotations

import math
import warnings

import pytest
from _peers import need

from renyi import dpsgd

pytestmark = [pytest.mark.optional, pytest.mark.filterwarnings("ignore:Secure RNG turned off")]

torch = need("torch")
need("opacus")

from opacus import PrivacyEngine  # noqa: E402
from opacus.accountants import RDPAccountant, create_accountant  # noqa: E402

import renyi.integrations.opacus as ro  # noqa: E402  (registers "renyi")

N, BATCH = 64, 8  # sample rate 1/8 per step


def _setup(seed: int = 0):
    torch.manual_seed(seed)
    x = torch.randn(N, 4)
    y = (x[:, 0] > 0).long()
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=BATCH)
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    return model, opt, loader


def _train(model, opt, loader, max_steps: int) -> int:
    loss_fn = torch.nn.CrossEntropyLoss()
    done = 0
    for xb, yb in loader:
        if done == max_steps:
            break
        opt.zero_grad()
        if len(xb):
            loss_fn(model(xb), yb).backward()
        opt.step()
        done += 1
    return done


def test_registered_under_renyi():
    acct = create_accountant("renyi")
    assert isinstance(acct, ro.RenyiAccountant) and acct.mechanism() == "renyi"


def test_privacy_engine_end_to_end(tmp_path):
    """Train a few steps; ε equals renyi.dpsgd.epsilon and is ≤ Opacus's RDP accountant."""
    model, opt, loader = _setup()
    engine = PrivacyEngine(accountant="renyi")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model, opt, loader = engine.make_private(module=model, optimizer=opt, data_loader=loader,
                                                 noise_multiplier=1.1, max_grad_norm=1.0)
        steps = _train(model, opt, loader, 5)
    q = 1 / len(loader)
    assert engine.accountant.history == [(1.1, q, steps)]  # Opacus's layout
    eps = engine.get_epsilon(1e-5)
    assert eps == float(dpsgd.epsilon(1.1, q, steps=steps, delta=1e-5))
    ref = RDPAccountant()
    ref.history = [(1.1, q, steps)]
    assert 0 < eps <= ref.get_epsilon(1e-5)

    # checkpoint round trip through Opacus's own save/load
    path = tmp_path / "ckpt.pt"
    engine.save_checkpoint(path=path, module=model, optimizer=opt)
    model2, opt2, loader2 = _setup()
    engine2 = PrivacyEngine(accountant="renyi")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model2, opt2, loader2 = engine2.make_private(module=model2, optimizer=opt2, data_loader=loader2,
                                                    noise_multiplier=1.1, max_grad_norm=1.0)
        engine2.load_checkpoint(path=path, module=model2, optimizer=opt2)
    assert engine2.accountant.history == engine.accountant.history
    assert engine2.get_epsilon(1e-5) == eps


def test_make_private_with_epsilon_reaches_target():
    """σ is calibrated by renyi; after the planned epochs ε ≤ target, and only just."""
    model, opt, loader = _setup()
    engine = PrivacyEngine(accountant="renyi")
    epochs = 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model, opt, loader = engine.make_private_with_epsilon(
            module=model, optimizer=opt, data_loader=loader, target_epsilon=3.0, target_delta=1e-5,
            epochs=epochs, max_grad_norm=1.0)
        for _ in range(epochs):
            _train(model, opt, loader, len(loader))
    sigma = opt.noise_multiplier
    assert sigma == float(dpsgd.noise_multiplier(3.0, 1e-5, 1 / len(loader), epochs=epochs))
    eps = engine.get_epsilon(1e-5)
    assert eps <= 3.0
    # tight: renyi's solver (10⁻⁹ on the RDP route, 10⁻⁴ in σ on the PLD route), not a
    # 0.01-tolerance bisection
    assert eps >= 3.0 * (1 - 1e-3)


def test_changing_noise_composes():
    """A history with two noise levels composes both (ε between the two single-σ runs)."""
    acct = ro.RenyiAccountant()
    for _ in range(100):
        acct.step(noise_multiplier=1.0, sample_rate=0.01)
    for _ in range(100):
        acct.step(noise_multiplier=2.0, sample_rate=0.01)
    assert acct.history == [(1.0, 0.01, 100), (2.0, 0.01, 100)]
    e = acct.get_epsilon(1e-5)
    lo = float(dpsgd.epsilon(2.0, 0.01, steps=200, delta=1e-5))
    hi = float(dpsgd.epsilon(1.0, 0.01, steps=200, delta=1e-5))
    assert lo <= e <= hi
    ref = RDPAccountant()
    ref.history = list(acct.history)
    assert e <= ref.get_epsilon(1e-5)


def test_event_steps_and_bad_input():
    import renyi

    acct = ro.RenyiAccountant()
    ev = renyi.PoissonSubsampled(renyi.Gaussian(1.0), 0.01)
    for _ in range(10):
        acct.step(event=ev)
    assert acct.history == [(ev, None, 10)]
    assert acct.get_epsilon(1e-5) == pytest.approx((10 * ev).epsilon(1e-5), rel=1e-12)
    with pytest.raises(renyi.DomainError, match="sample_rate"):
        acct.step(noise_multiplier=1.0, sample_rate=1.5)
    with pytest.raises(renyi.DomainError, match="noise_multiplier"):
        acct.step(noise_multiplier=0.0, sample_rate=0.1)
    with pytest.raises(TypeError):
        acct.step(noise_multiplier=1.0, sample_rate=0.1, event=ev)
    assert ro.RenyiAccountant().get_epsilon(1e-5) == 0.0
    assert math.isfinite(acct.get_epsilon(1e-5))


@pytest.mark.parametrize("steps", [2.9, 0.5, -1, float("nan"), float("inf")])
def test_a_history_with_a_fractional_step_count_is_refused(steps):
    """A step count is a whole number: 2.9 steps were billed as 2 (int() truncates), fewer
    than ran; 3.0 is 3."""
    import renyi

    acct = ro.RenyiAccountant()
    acct.history = [(1.0, 0.01, steps)]
    with pytest.raises(renyi.DomainError, match="history steps"):
        acct.get_epsilon(1e-5)
    acct.history = [(1.0, 0.01, 3.0)]
    three = ro.RenyiAccountant()
    three.history = [(1.0, 0.01, 3)]
    assert acct.get_epsilon(1e-5) == three.get_epsilon(1e-5)

def test_make_private_with_epsilon_declares_its_schedule_as_a_plan(tmp_path):
    """The calibrated schedule becomes a plan billed at its PLD ε (≤ the target) in a ledger;
    its steps cost nothing more; a step beyond it is refused before it is recorded."""
    from renyi import Accountant
    from renyi.errors import ConversionError

    model, opt, loader = _setup()
    engine = PrivacyEngine(accountant="renyi")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model, opt, loader = engine.make_private_with_epsilon(
            module=model, optimizer=opt, data_loader=loader, target_epsilon=3.0, target_delta=1e-5,
            epochs=1, max_grad_norm=1.0)
        path = str(tmp_path / "run.db")
        acct = engine.accountant.declare_plan(ledger=path)
        q = 1 / len(loader)
        sigma = opt.noise_multiplier
        assert acct.plan.steps == len(loader)
        assert acct.plan.epsilon == float(dpsgd.epsilon(sigma, q, steps=len(loader), delta=1e-5)) <= 3.0
        _train(model, opt, loader, len(loader))
        assert acct.plan.finished and acct.within_budget
        with pytest.raises(ConversionError, match="plan is exhausted"):
            _train(model, opt, loader, 1)
    assert engine.accountant.history == [(sigma, q, len(loader))]
    acct.close()
    with Accountant(ledger=path) as again:
        assert again.plan.steps_run == len(loader)


def test_declare_plan_needs_a_schedule_and_no_steps_yet():
    from renyi import ApproxDP
    from renyi.errors import DomainError

    acct = ro.RenyiAccountant()
    ro._CALIBRATED.value = None
    with pytest.raises(DomainError, match="make_private_with_epsilon"):
        acct.declare_plan()
    a = acct.declare_plan(ApproxDP(3.0, 1e-5), dpsgd.plan(1.0, 0.01, steps=50) + dpsgd.plan(2.0, 0.01, steps=50))
    for _ in range(50):
        acct.step(noise_multiplier=1.0, sample_rate=0.01)
    acct.step(noise_multiplier=2.0, sample_rate=0.01)
    assert a.plan.steps_run == 51 and acct.history == [(1.0, 0.01, 50), (2.0, 0.01, 1)]
    other = ro.RenyiAccountant()
    other.step(noise_multiplier=1.0, sample_rate=0.01)
    with pytest.raises(DomainError, match="before the first step"):
        other.declare_plan(ApproxDP(3.0, 1e-5), dpsgd.plan(1.0, 0.01, steps=50))


def test_declare_plan_records_steps_ahead_on_a_file(tmp_path):
    """plan_reserve through the Opacus accountant: a block per fsync, the plan's end still exact."""
    from renyi import Accountant, ApproxDP
    from renyi.errors import ConversionError

    acct = ro.RenyiAccountant()
    path = str(tmp_path / "ahead.db")
    a = acct.declare_plan(ApproxDP(3.0, 1e-5), dpsgd.plan(1.0, 0.01, steps=50), ledger=path, plan_reserve=8)
    for _ in range(50):
        acct.step(noise_multiplier=1.0, sample_rate=0.01)
    assert a.plan.finished and len(a.records) == 9  # blocks of 1, 2, 4, 8 × 5 and the last 3
    with pytest.raises(ConversionError, match="exhausted"):
        acct.step(noise_multiplier=1.0, sample_rate=0.01)
    assert acct.history == [(1.0, 0.01, 50)]
    a.close()
    with Accountant(ledger=path) as again:
        assert again.plan.steps_run == 50
