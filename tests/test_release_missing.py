"""Issue 27: missing and non-finite values (a policy per column, checked before any spend) and
the CSV options of the source (null string, delimiter, header)."""

from __future__ import annotations

import pytest

from renyi.release import SpecError, parse_spec
from renyi.release.run import missing_text


def _spec(*queries, **data):
    return {"data": {"source": "t.csv", "privacy_unit": "id", **data},
            "privacy": {"budget": {"rho": 0.5}}, "query": list(queries)}


def _s(**kw):
    q = {"name": "s", "type": "sum", "column": "x", "bounds": [0, 10]}
    q.update(kw)
    return q


def test_default_policy_is_error():
    s = parse_spec(_spec(_s(), _s(name="m", type="mean"), _s(name="q", type="quantile")))
    assert [q.missing for q in s.queries] == ["error"] * 3
    assert "no NULL, NaN or ±inf" in missing_text(s.queries[0])


@pytest.mark.parametrize("raw, parsed", [("drop", "drop"), ("Error", "error"), (3, 3.0), (0.0, 0.0), (10, 10.0)])
def test_policies(raw, parsed):
    assert parse_spec(_spec(_s(missing=raw))).queries[0].missing == parsed


def test_histogram_replacement_within_its_bins():
    h = {"name": "h", "type": "histogram", "column": "x", "bins": [0, 5, 10]}
    assert parse_spec(_spec(dict(h, missing=7))).queries[0].missing == 7.0
    with pytest.raises(SpecError, match="within the bins"):
        parse_spec(_spec(dict(h, missing=11)))


@pytest.mark.parametrize("raw, msg", [
    (11, "within the bounds"), (-0.5, "within the bounds"), (float("nan"), "finite"), (float("inf"), "finite"),
    ("zero", "must be one of"), (True, "missing must be"), ([1], "missing must be")])
def test_bad_policies_name_the_field(raw, msg):
    with pytest.raises(SpecError) as e:
        parse_spec(_spec(_s(missing=raw)))
    assert "missing" in str(e.value) and msg in str(e.value)
    assert e.value.name == "missing"


@pytest.mark.parametrize("qtype", ["count", "count_distinct"])
def test_missing_not_for_queries_without_a_numeric_value(qtype):
    q = {"name": "c", "type": qtype, "missing": "drop"}
    if qtype == "count_distinct":
        q["column"] = "x"
    with pytest.raises(SpecError, match="missing is not used"):
        parse_spec(_spec(q))


def test_csv_options():
    d = parse_spec(_spec(_s(), null_string=["NULL", "NA"], delimiter=";")).data
    assert d.null_strings == ("NULL", "NA") and d.delimiter == ";" and d.header is True
    d = parse_spec(_spec(_s(), null_string="NULL", header=False, columns=["id", "x"])).data
    assert d.null_strings == ("NULL",) and not d.header and d.columns == ("id", "x")


@pytest.mark.parametrize("data, field", [
    ({"null_string": 1}, "null_string"), ({"null_string": []}, "null_string"),
    ({"null_string": "a\nb"}, "null_string"),
    ({"delimiter": ";;"}, "delimiter"), ({"delimiter": '"'}, "delimiter"), ({"delimiter": ""}, "delimiter"),
    ({"header": "no"}, "header"), ({"header": False}, "columns"), ({"columns": ["a"]}, "columns"),
    ({"header": False, "columns": ["a", "A"]}, "columns"),
    ({"source": "t.parquet", "delimiter": ";"}, "delimiter"),
])
def test_bad_csv_options_name_the_field(data, field):
    with pytest.raises(SpecError) as e:
        parse_spec(_spec(_s(), **data))
    assert field in str(e.value) and "\n" not in str(e.value)


# ----------------------------------------------------------------------------- end to end (DuckDB)
def _csv(path, text):
    path.write_text(text)
    return str(path)


def _run(tmp_path, data, queries, **kw):
    import numpy as np

    import renyi

    spec = {"data": data, "privacy": {"budget": {"rho": 50.0}, "ledger": str(tmp_path / "l.db")}, "query": queries}
    return renyi.release(spec, out=str(tmp_path / "out"), rng=np.random.default_rng(0), salt=1, **kw)


def _spent(tmp_path):
    from renyi import Accountant

    if not (tmp_path / "l.db").exists():
        return 0
    with Accountant(ledger=str(tmp_path / "l.db")) as a:
        return len(a.history)


def test_non_finite_values_refused_before_any_spend(tmp_path):
    """NaN, inf, -inf and NULL in a summed column used to become the clamp bounds or vanish: now
    the release fails before anything is spent or written, naming the column and the rows."""
    pytest.importorskip("duckdb")
    src = _csv(tmp_path / "t.csv", "id,g,x\n1,a,1\n2,a,nan\n3,b,inf\n4,b,-inf\n5,a,\n6,b,2\n")
    with pytest.raises(SpecError) as e:
        _run(tmp_path, {"source": src, "privacy_unit": "id"},
             [{"name": "total", "type": "sum", "column": "x", "bounds": [0, 10], "by": ["g"],
               "keys": {"g": ["a", "b"]}}])
    msg = str(e.value)
    assert "'total'" in msg and "'x'" in msg and "4 row(s)" in msg and "\n" not in msg
    assert _spent(tmp_path) == 0 and not (tmp_path / "out").exists()


def test_drop_and_replace(tmp_path):
    pytest.importorskip("duckdb")
    src = _csv(tmp_path / "t.csv", "id,g,x\n1,a,1\n2,a,nan\n3,b,inf\n4,b,-inf\n5,a,\n6,b,2\n")
    q = {"type": "sum", "column": "x", "bounds": [0, 10], "by": ["g"], "keys": {"g": ["a", "b"]}}
    plan_exact = {}
    from renyi.release import make_plan
    from renyi.release.duckdb import DuckDBEngine

    s = parse_spec({"data": {"source": src, "privacy_unit": "id"}, "privacy": {"budget": {"rho": 1.0}},
                    "query": [dict(q, name="drop", missing="drop"), dict(q, name="five", missing=5)]})
    with DuckDBEngine(s.data) as eng:
        plan_exact = eng.aggregate(make_plan(s), 1)
    # drop: a = 1, b = 2 (one row each); five: a = 1 + 5 + 5, b = 5 + 5 + 2
    assert plan_exact["drop"]["sum"].tolist() == [1, 2] and plan_exact["drop"]["count"].tolist() == [1, 1]
    assert plan_exact["five"]["sum"].tolist() == [11, 12] and plan_exact["five"]["count"].tolist() == [3, 3]
    r = _run(tmp_path, {"source": src, "privacy_unit": "id"}, [dict(q, name="drop", missing="drop")])
    man = r.manifest["queries"][0]
    assert "take no part" in man["missing"]
    import json

    rep = json.loads((tmp_path / "out" / "report.json").read_text())
    assert rep["intervals"]["queries"]["drop"]["missing"] == man["missing"]


def test_literal_null_in_a_numeric_csv_column(tmp_path):
    """A literal NULL made the column text ("must be numeric to be summed"); with null_string it
    is read as NULL, and the policy applies."""
    pytest.importorskip("duckdb")
    src = _csv(tmp_path / "t.csv", "id;g;x\n1;a;1.5\n2;a;NULL\n3;b;2\n")
    q = [{"name": "s", "type": "sum", "column": "x", "bounds": [0, 10], "by": ["g"], "keys": {"g": ["a", "b"]},
          "granularity": 0.5}]
    with pytest.raises(SpecError, match="must be numeric"):
        _run(tmp_path, {"source": src, "privacy_unit": "id", "delimiter": ";"}, q)
    with pytest.raises(SpecError, match="1 row"):
        _run(tmp_path, {"source": src, "privacy_unit": "id", "delimiter": ";", "null_string": "NULL"}, q)
    r = _run(tmp_path, {"source": src, "privacy_unit": "id", "delimiter": ";", "null_string": "NULL"},
             [dict(q[0], missing="drop")])
    assert len(r.results[0].value) == 2


def test_csv_without_header(tmp_path):
    pytest.importorskip("duckdb")
    from renyi.release import make_plan
    from renyi.release.duckdb import DuckDBEngine

    src = _csv(tmp_path / "t.csv", "1,a,3\n2,b,4\n3,a,5\n")
    s = parse_spec({"data": {"source": src, "privacy_unit": "pid", "header": False, "columns": ["pid", "g", "x"]},
                    "privacy": {"budget": {"rho": 1.0}},
                    "query": [{"name": "s", "type": "sum", "column": "x", "bounds": [0, 10], "by": ["g"],
                               "keys": {"g": ["a", "b"]}}]})
    with DuckDBEngine(s.data) as eng:
        assert set(eng.columns()) == {"pid", "g", "x"}
        agg = eng.aggregate(make_plan(s), 1)
    assert agg["s"]["sum"].tolist() == [8, 4] and agg["s"]["count"].tolist() == [2, 1]
