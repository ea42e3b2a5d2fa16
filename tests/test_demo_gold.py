"""The Cranfield demo, end to end: every public judgement reaches the gold set, exports agree
with themselves, and the dashboard reproduces the trec_eval figures of the dataset's README."""

from __future__ import annotations

from pathlib import Path

import pytest

from gold.export import build_export, render_export
from gold.services import ConsensusPolicy, freeze_gold_set
from gold.units import levels
from metrics.evaluation import evaluation_setting
from metrics.reports import run_rows
from tests.test_gold_commands import assert_consistent

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

CRANFIELD = Path(__file__).resolve().parent.parent / "data" / "demo" / "cranfield"
# data/demo/cranfield/README.md, "Runs": pytrec_eval-terrier (trec_eval) against qrels.txt.
COLUMNS = ("nDCG@10", "RR", "R@10", "P@10", "MAP")
README_FIGURES = {
    run: dict(zip(COLUMNS, figures, strict=True))
    for run, figures in {
        "stevinjs_english_bm25": (0.3673, 0.5268, 0.3969, 0.2329, 0.2914),
        "stevinjs_standard_classic": (0.3431, 0.5150, 0.3668, 0.2187, 0.2645),
        "stevinjs_standard_boolean": (0.2082, 0.3549, 0.2261, 0.1364, 0.1470),
    }.items()
}


@pytest.fixture(scope="module")
def cranfield(demo_module, django_db_blocker):
    """The Cranfield project as ``manage.py demo`` builds it (tests.demo_database)."""
    from annotator.models import Project

    with django_db_blocker.unblock():
        return Project.objects.get(slug="cranfield")


def test_document_gold_holds_all_1612_public_judgements(cranfield):
    gold_set = freeze_gold_set(
        cranfield, "assessors", policy=ConsensusPolicy(), annotators=["cranfield-assessors"]
    )
    qrels = render_export(build_export(gold_set, "documents"), "qrels").decode()
    public = (CRANFIELD / "qrels.txt").read_text().split("\n")
    assert len(qrels.splitlines()) == 1612
    assert sorted(qrels.splitlines()) == sorted(line for line in public if line)
    assert "125 0 995 1" in qrels.splitlines()  # the empty document's judgement


def test_every_demo_export_keeps_evidence_and_rel_map_in_step(cranfield):
    gold_set = freeze_gold_set(
        cranfield, "all", policy=ConsensusPolicy(), annotators=["cranfield-assessors"]
    )
    for level in levels(cranfield):
        export = build_export(gold_set, level)
        assert export.queries, level
        assert_consistent(export)


def test_dashboard_reproduces_the_readme_trec_eval_figures(cranfield):
    # k = 50, the runs' depth: the dashboard's MRR@50 is trec_eval's recip_rank.
    for k, measures in ((10, ("nDCG@10", "R@10", "P@10", "MAP")), (50, ("RR",))):
        setting = evaluation_setting(cranfield, level="documents", k=k)
        rows = {row["run"].name: row for row in run_rows(cranfield, setting)}
        for run, figures in README_FIGURES.items():
            cells = {cell["name"]: cell["mean"] for cell in rows[run]["cells"]}
            for measure in measures:
                name = "MRR@50" if measure == "RR" else measure
                assert round(cells[name], 4) == figures[measure], (run, measure)


def test_the_demo_measures_runs_on_its_nuggets(cranfield):
    """The demo's nuggets (written for it) reach the dashboard: 12 queries, measured."""
    from nuggets.evaluation import NuggetSetting

    setting = evaluation_setting(cranfield, level="documents", k=10)
    nuggets = NuggetSetting.of(cranfield, setting)
    assert nuggets.n_queries == 12
    run = next(
        r["run"] for r in run_rows(cranfield, setting) if r["run"].name == "stevinjs_english_bm25"
    )
    recall = nuggets.scores(run).mean("NuggetRecall@10")
    assert 0 < recall <= 1
