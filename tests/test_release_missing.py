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
