"""`manage.py compare`: runs × measures with the web comparison's significance tests."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from metrics.trec_files import join_files
from numerics.measures.trec_eval import columns_for, values
from numerics.significance import against_baseline

CRANFIELD = Path(__file__).resolve().parent.parent / "data" / "demo" / "cranfield"
QRELS = CRANFIELD / "qrels.txt"
RUNS = [
    CRANFIELD / "runs" / f"stevinjs_{n}.run"
    for n in ("english_bm25", "standard_boolean", "standard_classic")
]


def compare(*args) -> str:
    out = io.StringIO()
    call_command("compare", *map(str, args), stdout=out)
    return out.getvalue()


def test_json_holds_the_same_tests_as_the_web_comparison():
    result = json.loads(
        compare(
            QRELS,
            *RUNS,
            "-m",
            "map",
            "-m",
            "nDCG@10",
            "--format",
            "json",
            "--baseline",
            RUNS[2].name,
        )
    )
    assert result["baseline"] == RUNS[2].name and result["measures"] == ["map", "nDCG@10"]
    assert result["queries"] == 225
    for measure in ("map", "nDCG@10"):
        (column,) = columns_for(measure)
        per_run = [values(join_files(QRELS, r).rows, [column], 1)[measure] for r in RUNS]
        expected = against_baseline(per_run[2], per_run[:2])
        for run, test in zip(RUNS[:2], expected, strict=True):
            cell = result["runs"][run.name][measure]
            for key in ("delta", "p_randomization", "p_holm", "p_t", "p_t_holm", "significant"):
                assert cell[key] == getattr(test, key), (run.name, measure, key)
            assert cell["value"] == pytest.approx(per_run[RUNS.index(run)].mean(), abs=1e-12)
        assert set(result["runs"][RUNS[2].name][measure]) == {"value"}
    assert result["runs"][RUNS[0].name]["map"]["value"] == pytest.approx(0.2914, abs=5e-5)


def test_text_marks_significant_differences_and_csv_latex_carry_them():
    text = compare(QRELS, RUNS[0], RUNS[1], "-m", "map", "-m", "P_10").splitlines()
    assert text[0].split() == ["run", "map", "P_10"]
    assert text[1].split() == [RUNS[0].name, "(baseline)", "0.2914", "0.2329"]
    assert text[2].split()[1:] == ["0.1470†‡", "0.1364†‡"]  # boolean is far worse
    assert text[3].startswith("† paired randomization test, ‡ paired t-test")
    rows = list(
        csv.DictReader(
            io.StringIO(compare(QRELS, RUNS[0], RUNS[1], "-m", "map", "--format", "csv"))
        )
    )
    assert [(r["run"], r["measure"]) for r in rows] == [
        (RUNS[0].name, "map"),
        (RUNS[1].name, "map"),
    ]
    assert rows[0]["p_holm"] == "" and float(rows[1]["p_holm"]) < 0.05
    latex = compare(QRELS, RUNS[0], RUNS[1], "-m", "map", "--format", "latex")
    assert r"\textbf{0.2914}" in latex and r"0.1470$^{\dagger\ddagger}$" in latex
    assert r"stevinjs\_english\_bm25.run" in latex


def test_bad_invocations_are_clear_errors():
    with pytest.raises(CommandError, match="at least two runs"):
        compare(QRELS, RUNS[0])
    with pytest.raises(CommandError, match="not among the runs"):
        compare(QRELS, RUNS[0], RUNS[1], "--baseline", "other.run")
    with pytest.raises(CommandError, match="unknown measure"):
        compare(QRELS, RUNS[0], RUNS[1], "-m", "Precision@5")


@pytest.mark.parametrize("measure", ["gm_map", "num_q", "runid", "official"])
def test_summary_only_measures_are_refused_not_dropped(measure):
    # They were left out without a word (exit 0): a comparison tests per-query values.
    with pytest.raises(CommandError, match="summary only"):
        compare(QRELS, RUNS[0], RUNS[1], "-m", "map", "-m", measure)


def test_trec_eval_measures_with_parameters_and_printed_names_compare():
    result = json.loads(
        compare(
            QRELS, RUNS[0], RUNS[1], "-m", "P.5,10", "-m", "Rprec_mult_0.20", "--format", "json"
        )
    )
    assert result["measures"] == ["P_5", "P_10", "Rprec_mult_0.20"]
    assert result["seed"] == 0
