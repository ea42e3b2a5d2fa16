"""`manage.py agreement`: the JSON contract, --domain, --format, bad lines by number.

The command reads a file only; no test here touches the database.
"""

from __future__ import annotations

import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from formats import MAX_REPORTED
from numerics.agreement.report import agreement_report

KEYS = {
    "n_items",
    "n_annotators",
    "percent_agreement",
    "fleiss_kappa",
    "krippendorff_alpha",
    "pairs",
    "per_query",
}
PAIR_KEYS = {"a", "b", "n", "cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic",
             "confusion"}  # fmt: skip

CSV = (
    "annotator,item,grade,query\n"
    "ann,i1,3,q1\nbob,i1,3,q1\nann,i2,0,q1\nbob,i2,1,q1\n"
    "ann,i3,2,q2\nbob,i3,2,q2\ncat,i3,2,q2\ncat,i4,1,q2\n"
)


def run(*args) -> str:
    out = StringIO()
    call_command("agreement", *map(str, args), stdout=out)
    return out.getvalue()


def run_json(*args) -> dict:
    text = run(*args, "--json")
    return json.loads(text)  # exactly one JSON object: json.loads rejects trailing data


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_json_contract(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text(CSV)
    report = run_json(path)
    assert set(report) == KEYS
    assert report["n_items"] == 4 and report["n_annotators"] == 3
    # i1: 1 pair agrees; i2: 0; i3: 3 of 3 pairs agree; i4 has one label (left out).
    assert report["percent_agreement"] == pytest.approx((1 + 0 + 1) / 3)
    assert report["fleiss_kappa"]["m"] == 2 and report["fleiss_kappa"]["n_items"] == 2
    assert set(report["krippendorff_alpha"]) == {"nominal", "ordinal", "interval"}
    assert [(p["a"], p["b"], p["n"]) for p in report["pairs"]] == [
        ("ann", "bob", 3),
        ("ann", "cat", 1),
        ("bob", "cat", 1),
    ]
    assert all(set(p) == PAIR_KEYS for p in report["pairs"])
    assert report["pairs"][1]["cohen_kappa"] is None  # one shared item, one category
    assert report["pairs"][0]["confusion"][0][1] == 1  # ann 0, bob 1 on i2
    assert len(report["pairs"][0]["confusion"]) == 4  # default domain 0..3
    assert set(report["per_query"]) == {"q1", "q2"}
    assert set(report["per_query"]["q1"]) == {"krippendorff_alpha", "percent_agreement"}
    assert report["per_query"]["q1"]["percent_agreement"] == 0.5
    assert report["per_query"]["q2"]["percent_agreement"] == 1.0
    assert report["per_query"]["q2"]["krippendorff_alpha"] == {
        "nominal": None,  # i3 is the only pairable item and all say 2: undefined
        "ordinal": None,
        "interval": None,
    }


def test_values_equal_the_reference_package(tmp_path):
    import krippendorff

    path = tmp_path / "labels.csv"
    path.write_text(CSV)
    report = run_json(path)
    # annotators ann, bob, cat × items i1..i4, grades as written
    data = np.array([[3, 0, 2, np.nan], [3, 1, 2, np.nan], [np.nan, np.nan, 2, 1]], dtype=float)
    for level in ("nominal", "ordinal", "interval"):
        theirs = krippendorff.alpha(
            reliability_data=data, level_of_measurement=level, value_domain=[0, 1, 2, 3]
        )
        assert report["krippendorff_alpha"][level] == pytest.approx(theirs, abs=1e-9)


def test_jsonl_without_query_and_format_override(tmp_path):
    rows = [
        {"annotator": "a", "item": "x", "grade": 1},
        {"annotator": "b", "item": "x", "grade": 1},
        {"annotator": "a", "item": 7, "grade": 0},
        {"annotator": "b", "item": 7, "grade": 1},
    ]
    report = run_json(write_jsonl(tmp_path / "labels.jsonl", rows))
    assert report["per_query"] == {}
    assert report["percent_agreement"] == 0.5
    assert report["pairs"][0]["n"] == 2
    odd = write_jsonl(tmp_path / "labels.txt", rows)  # the name says nothing: the content decides
    assert run_json(odd) == report
    assert run_json(odd, "--format", "jsonl") == report
    with pytest.raises(CommandError, match="line 1: the header lacks"):
        run(odd, "--format", "csv")


def test_domain_is_used_even_for_unseen_grades(tmp_path):
    import krippendorff

    path = write_jsonl(
        tmp_path / "labels.jsonl",
        [
            {"annotator": "a", "item": "x", "grade": 1},
            {"annotator": "b", "item": "x", "grade": 2},
            {"annotator": "a", "item": "y", "grade": 2},
            {"annotator": "b", "item": "y", "grade": 2},
            {"annotator": "a", "item": "z", "grade": 10},
            {"annotator": "b", "item": "z", "grade": 10},
        ],
    )
    with pytest.raises(CommandError, match="line 5: grade 10 is outside the domain"):
        run(path)
    narrow = run_json(path, "--domain", "1,2,10")
    wide = run_json(path, "--domain", "0,1,2,3,10")
    assert len(narrow["pairs"][0]["confusion"]) == 3
    assert len(wide["pairs"][0]["confusion"]) == 5
    # unused grades change neither alpha nor percent agreement (interval uses the values) ...
    for level in ("nominal", "ordinal", "interval"):
        assert wide["krippendorff_alpha"][level] == pytest.approx(
            narrow["krippendorff_alpha"][level], abs=1e-12
        )
    # ... nor unweighted kappa, but weighted kappa's weights are rank distances |i − j| in
    # the domain (sklearn with labels = the domain): 7/3 vs 11/3 expected disagreement.
    a, b = [1, 2, 10], [2, 2, 10]
    assert narrow["pairs"][0]["cohen_kappa"] == pytest.approx(wide["pairs"][0]["cohen_kappa"])
    assert narrow["pairs"][0]["cohen_kappa_linear"] == pytest.approx(1 - 3 / 7)
    assert wide["pairs"][0]["cohen_kappa_linear"] == pytest.approx(1 - 3 / 11)
    interval = krippendorff.alpha(
        reliability_data=[a, b], level_of_measurement="interval", value_domain=[0, 1, 2, 3, 10]
    )
    assert wide["krippendorff_alpha"]["interval"] == pytest.approx(interval, abs=1e-9)


def test_text_output_prints_every_coefficient_with_its_n(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text(CSV)
    text = run(path)
    assert "items 4, annotators 3" in text
    assert "percent agreement" in text and "(n=3 items with ≥ 2 labels)" in text
    assert "Fleiss' kappa" in text and "(n=2 items with m=2 labels)" in text
    for level in ("nominal", "ordinal", "interval"):
        assert f"Krippendorff's alpha {level}" in text
    assert "(n=7 pairable labels on 3 items)" in text
    assert "ann × bob (n=3)" in text and "ann × cat (n=1): kappa not defined" in text
    assert "query q2 (n=1 items with ≥ 2 labels)" in text


def test_bad_lines_are_named(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text("annotator,item,grade\na,x,1\na,x,2\nb,x,seven\nb,y,\nc,y,9\nd,y,1.5\n")
    with pytest.raises(CommandError) as raised:
        run(path)
    assert str(raised.value).splitlines() == [
        "line 3: a grades x again (first on line 2)",
        "line 4: grade must be a whole number, not 'seven'",
        "line 5: missing grade",
        "line 6: grade 9 is outside the domain",
        "line 7: grade must be a whole number, not '1.5'",
    ]
    header = tmp_path / "h.csv"
    header.write_text("who,item,grade\n")
    with pytest.raises(CommandError, match="line 1: the header lacks annotator"):
        run(header)
    with pytest.raises(CommandError, match="--domain"):
        run(path, "--domain", "a,b")
    with pytest.raises(CommandError, match="--domain"):
        run(path, "--domain", "3,2,1")
    with pytest.raises(CommandError, match="no such file"):
        run(tmp_path / "absent.csv")


def test_bad_jsonl_lines_and_the_error_cap(tmp_path):
    lines = ['{"annotator": "a", "item": "x", "grade": 1}', "not json", "[1, 2]",
             '{"annotator": "b", "grade": 1}', '{"annotator": "b", "item": "x", "grade": 2.0}',
             '{"annotator": "c", "item": "x", "grade": true}']  # fmt: skip
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(CommandError) as raised:
        run(path)
    messages = str(raised.value).splitlines()
    assert [m.split(":")[0] for m in messages] == ["line 2", "line 3", "line 4", "line 5", "line 6"]
    assert messages[2] == "line 4: missing item"
    many = tmp_path / "many.csv"
    rows = "".join(f"a{i},x,9\n" for i in range(MAX_REPORTED + 10))
    many.write_text("annotator,item,grade\n" + rows)
    with pytest.raises(CommandError) as raised:
        run(many)
    messages = str(raised.value).splitlines()
    assert len(messages) == MAX_REPORTED + 1 == 201  # the first 200 bad lines, then a count
    assert messages[0] == "line 2: grade 9 is outside the domain"
    assert messages[-1] == "… and 10 more problems"


def test_an_item_under_two_queries_is_a_bad_line(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text("annotator,item,grade,query\na,x,1,q1\nb,x,1,q2\n")
    with pytest.raises(CommandError, match="line 3: item x has query 'q2' here but 'q1'"):
        run(path)


def test_empty_file_and_all_undefined(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("annotator,item,grade\n")
    with pytest.raises(CommandError, match="no labels"):
        run(empty)
    single = tmp_path / "single.csv"
    single.write_text("annotator,item,grade\na,x,1\nb,y,2\n")
    report = run_json(single)
    assert report["percent_agreement"] is None
    assert report["fleiss_kappa"] == {"m": None, "n_items": 0, "value": None}
    assert report["krippendorff_alpha"] == {"nominal": None, "ordinal": None, "interval": None}
    assert report["pairs"][0]["n"] == 0 and report["pairs"][0]["cohen_kappa"] is None


def test_agreement_report_is_reusable_without_line_numbers():
    rows = [
        {"annotator": "b", "item": "1", "grade": 2},
        {"annotator": "a", "item": "1", "grade": 2},
        {"annotator": "a", "item": "2", "grade": 0},
        {"annotator": "b", "item": "2", "grade": 3},
    ]
    report = agreement_report(rows, [0, 1, 2, 3])
    assert set(report) == KEYS and report["per_query"] == {}
    assert [(p["a"], p["b"]) for p in report["pairs"]] == [("a", "b")]
    assert report["pairs"][0]["confusion"][0][3] == 1  # rows: a's grade, columns: b's
