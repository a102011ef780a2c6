"""Issue 27: the plan, the report and the manifest of one release state every figure in the
same (output) units, and name the privacy unit ("one person, up to 3 rows, added or removed")."""

from __future__ import annotations

import pytest

from renyi.accounting.accuracy import half_width
from renyi.release import make_plan, parse_spec, release_report
from renyi.release.run import _manifest, privacy_unit_text


def _spec(m=3):
    return parse_spec({"data": {"source": "t.csv", "privacy_unit": "person_id", "max_rows_per_unit": m},
                       "privacy": {"budget": {"epsilon": 1.0, "delta": 1e-10}},
                       "query": [{"name": "n", "type": "count", "by": ["g"], "keys": {"g": ["a", "b"]}},
                                 {"name": "total", "type": "sum", "column": "x", "bounds": [0, 150000],
                                  "granularity": 100, "by": ["g"], "keys": {"g": ["a", "b"]}}]})


def test_report_half_widths_are_in_output_units_like_the_plan():
    """Regression: the plan said ±7.665e+06 for a sum with granularity 100 where the report of the
    same release said ±76650 (noise units)."""
    plan = make_plan(_spec())
    rep = release_report(plan)
    for share, m in zip(rep.shares, plan.measurements):
        expected = half_width(m.mechanism, coverage=0.95) * m.unit  # independent of the plan's own figure
        assert share.half_width_95 == pytest.approx(expected, rel=1e-12)
        if m.coverage == 0.95:
            assert share.half_width_95 == pytest.approx(m.half_width * m.unit, rel=1e-12)
    s = rep.shares[1]
    assert s.half_width_95 > 1e6  # the sum's ± is in currency units, not in units of 100
    assert "unit=100" in s.mechanism
    d = rep.to_dict()["mechanisms"][1]
    assert d["half_width_95"] == pytest.approx(plan.measurements[1].half_width * 100)


def test_manifest_noise_in_output_units():
    plan = make_plan(_spec())
    man = _manifest(plan, "x", None, ["n.csv", "total.csv"])
    row = man["queries"][1]["measurements"][0]
    m = plan.measurements[1]
    assert row["sigma"] == pytest.approx(float(m.mechanism.sigma) * 100)
    assert row["l2"] == pytest.approx(m.sensitivity.l2 * 100)
    assert row["half_width"] == pytest.approx(m.half_width * 100)
    assert man["neighbours"] == "one person (privacy unit 'person_id'), up to 3 rows, added or removed"


@pytest.mark.parametrize("m, words", [(3, "up to 3 rows"), (1, "1 row")])
def test_report_names_the_privacy_unit(m, words):
    rep = release_report(make_plan(_spec(m)))
    assert rep.neighbouring_note == f"one person (privacy unit 'person_id'), {words}, added or removed"
    assert "one record" not in rep.neighbouring_note
    assert all("one person" in s.assumption for s in rep.shares)
    assert privacy_unit_text(_spec(m)) == rep.neighbouring_note


def test_cli_plan_and_report_print_the_same_half_width(tmp_path):
    """The CLI prints the plan's ± and the report's 95 % ± of the sum: one figure, twice."""
    from typer.testing import CliRunner

    from renyi.cli import app
    from renyi.core.formatting import fmt_up

    spec = tmp_path / "s.toml"
    spec.write_text('[data]\nsource = "t.csv"\nprivacy_unit = "person_id"\nmax_rows_per_unit = 3\n'
                    '[privacy]\nbudget = { epsilon = 1.0, delta = 1e-10 }\n'
                    '[[query]]\nname = "total"\ntype = "sum"\ncolumn = "x"\nbounds = [0, 150000]\n'
                    'granularity = 100\n')
    out = CliRunner().invoke(app, ["release", str(spec), "--dry-run"], env={"COLUMNS": "200"}).output
    plan = make_plan(parse_spec({"data": {"source": "t.csv", "privacy_unit": "person_id", "max_rows_per_unit": 3},
                                 "privacy": {"budget": {"epsilon": 1.0, "delta": 1e-10}},
                                 "query": [{"name": "total", "type": "sum", "column": "x", "bounds": [0, 150000],
                                            "granularity": 100}]}))
    hw = fmt_up(plan.measurements[0].half_width * 100)
    assert out.count(hw) >= 2, out
    assert "one person (privacy unit 'person_id'), up to 3 rows, added or removed" in out
