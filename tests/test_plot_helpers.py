"""Notebook figures: helpers take any guarantee or mechanism, never change the backend, and the
reports render as HTML and rich tables."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

import matplotlib  # noqa: E402

import renyi  # noqa: E402
from renyi import plots  # noqa: E402
from renyi.errors import DomainError  # noqa: E402


@pytest.fixture
def template_backend():
    """A backend a user might have chosen; the plotting code must leave it alone."""
    old = matplotlib.get_backend()
    matplotlib.use("template", force=True)
    yield "template"
    matplotlib.use(old, force=True)


def test_helpers_never_switch_the_backend(template_backend, tmp_path):
    """No global `matplotlib.use` anywhere: the user's backend survives every figure and save."""
    g = renyi.Gaussian(2.0)
    figs = [plots.epsilon_vs_count(g, renyi.Laplace(1.0), max_count=50, points=5),
            plots.rdp_curve(g, renyi.ZCDP(0.1)), plots.privacy_profile(g, renyi.PureDP(1.0)),
            plots.privacy_loss(renyi.Laplace(1.0))]
    plots.save_figure(figs[0], tmp_path / "a.png")
    assert matplotlib.get_backend() == template_backend


def test_epsilon_vs_count_draws_the_library_numbers():
    """Each line is renyi.compose((item, k)).epsilon(delta) at its k (pairs multiply the count)."""
    fig = plots.epsilon_vs_count(renyi.Laplace(1.0), (renyi.Gaussian(3.0), 2), delta=1e-6, max_count=10, points=3)
    (ax,) = fig.axes
    lap, gauss = ax.get_lines()
    assert list(lap.get_xdata()) == [1, 3, 10]
    assert lap.get_ydata()[1] == renyi.compose((renyi.Laplace(1.0), 3)).epsilon(1e-6)
    assert gauss.get_ydata()[2] == renyi.compose((renyi.Gaussian(3.0), 20)).epsilon(1e-6)
    assert lap.get_label().startswith("Laplace(") and gauss.get_label().startswith("2 × Gaussian(")


def test_helpers_draw_into_given_axes():
    """`ax=` draws into the caller's axes and returns their figure."""
    from matplotlib.figure import Figure

    fig = Figure()
    ax1, ax2 = fig.subplots(1, 2)
    assert plots.rdp_curve(renyi.ZCDP(0.5), ax=ax1, labels=["half"]) is fig
    assert plots.privacy_profile(renyi.Gaussian(1.0), ax=ax2) is fig
    assert ax1.get_lines()[0].get_label() == "half"


def test_helpers_refuse_bad_input():
    """No items, or the wrong number of labels: a DomainError naming the parameter."""
    with pytest.raises(DomainError, match="at least one"):
        plots.rdp_curve()
    with pytest.raises(DomainError, match="labels must give one label per item"):
        plots.rdp_curve(renyi.ZCDP(0.5), labels=["a", "b"])


def test_reports_render_in_notebooks_and_rich():
    """Report and AccountantReport have an HTML view (Jupyter) and a rich view with the numbers."""
    from rich.console import Console

    from renyi._examples import example_path
    from renyi.cli._format import fmt_up
    from renyi.pipeline import load_pipeline
    from renyi.report import compute_report

    r = compute_report(load_pipeline(example_path("census")))
    page = r._repr_html_()
    assert page.startswith("<div>") and fmt_up(r.epsilon) in page and "<table>" in page
    console = Console(width=200, record=True)
    console.print(r)
    assert fmt_up(r.epsilon) in console.export_text()
    acc = renyi.Accountant(budget=renyi.ZCDP(0.5))
    acc.spend(renyi.Gaussian(2.0), count=3)
    rep = acc.report()
    assert "ZCDP(rho=0.5)" in rep._repr_html_()
    console.print(rep)
    assert "Accountant" in console.export_text()
