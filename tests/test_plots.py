"""Figures: produced for every example, non-empty PNGs of the expected pixel size, SVG too."""

from __future__ import annotations

import importlib.util
import struct
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from renyi import plots  # noqa: E402
from renyi.mechanisms import Gaussian, Laplace  # noqa: E402
from renyi.pipeline import load_pipeline  # noqa: E402
from renyi.report import compute_report  # noqa: E402

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
HAS_SUBSAMPLING = importlib.util.find_spec("renyi.subsampling") is not None
AVAILABLE = ["census"] + (["dpsgd", "mixed"] if HAS_SUBSAMPLING else [])


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) from the PNG header (IHDR chunk)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def expected(size: tuple[float, float]) -> tuple[int, int]:
    return round(size[0] * plots.DPI), round(size[1] * plots.DPI)


def check_png(path: Path, size: tuple[float, float]) -> None:
    assert path.stat().st_size > 20_000, "suspiciously small figure"
    assert png_size(path) == expected(size)


@pytest.fixture(scope="module", params=AVAILABLE)
def report(request):
    return compute_report(load_pipeline(EXAMPLES / f"{request.param}.toml"))


def test_report_figure(report, tmp_path):
    """The report figure (routes + RDP curve) of each example."""
    out = tmp_path / "report.png"
    plots.save_figure(plots.report_figure(report), out)
    check_png(out, plots.WIDE_FIGSIZE)


def test_rdp_figure(report, tmp_path):
    """The RDP curve with its witness order, for each example."""
    out = tmp_path / "rdp.png"
    plots.save_figure(plots.rdp_figure(report), out)
    check_png(out, plots.FIGSIZE)


def test_profile_figure(report, tmp_path):
    """The privacy profile δ(ε), for each example."""
    out = tmp_path / "profile.png"
    plots.save_figure(plots.profile_figure(report, points=12), out)
    check_png(out, plots.FIGSIZE)


def test_compositions_figure_and_data(tmp_path):
    """ε vs compositions: exact ≤ every other analysis at every k; PNG of the right size."""
    d = plots.compositions_data(20.0, max_count=1000, points=12)
    for key in ("rdp", "rdp_classic", "zcdp", "advanced", "basic", "rdp_fixed_8", "rdp_fixed_32"):
        assert (d[key] >= d["exact"]).all(), key
    out = tmp_path / "comp.png"
    plots.save_figure(plots.compositions_figure(20.0, max_count=1000), out)
    check_png(out, plots.WIDE_FIGSIZE)


@pytest.mark.parametrize("mech", [Gaussian(1.0), Laplace(1.0)], ids=["gaussian", "laplace"])
def test_plrv_figure(mech, tmp_path):
    """The PLRV with its α-power means, for a continuous and a Laplace-type loss."""
    out = tmp_path / "plrv.png"
    plots.save_figure(plots.plrv_figure(mech), out)
    check_png(out, plots.FIGSIZE)


def test_svg_output(tmp_path):
    """SVG output is written by suffix."""
    out = tmp_path / "comp.svg"
    plots.save_figure(plots.compositions_figure(5.0, max_count=100), out)
    text = out.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text


def test_bad_suffix_is_refused(tmp_path):
    """Only .png, .svg and .pdf are written."""
    fig = plots.compositions_figure(5.0, max_count=10)
    with pytest.raises(ValueError, match=".png"):
        plots.save_figure(fig, tmp_path / "x.gif")
