"""A project backup carries its answer runs: answers, sentences and citations (their spans)."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from annotator.importing import run_import
from answers.models import Citation

from .conftest import write_jsonl

pytestmark = pytest.mark.django_db


def picture(slug: str) -> list:
    return sorted(
        (
            c.answer.run.name,
            c.answer.query.qid,
            c.sentence.number,
            c.sentence.text,
            c.number,
            c.granularity,
            c.document.doc_id,
            c.start,
            c.end,
            c.chunk.chunk_id if c.chunk else "",
        )
        for c in Citation.objects.filter(answer__run__project__slug=slug).select_related(
            "answer__run", "answer__query", "sentence", "document", "chunk"
        )
    )


def test_answer_runs_travel_in_a_backup(answer_project, tmp_path):
    line = {
        "qid": "q1",
        "answer": "Lift. Flaps.",
        "sentences": [
            {"text": "Lift.", "citations": [{"chunk_id": "a#0"}, {"doc_id": "b"}]},
            {"text": "Flaps.", "citations": [{"doc_id": "a", "start": 17, "end": 22}]},
        ],
    }
    path = write_jsonl(tmp_path / "a.jsonl", [line])
    run_import(
        "answers", answer_project["project"], path, options={"name": "r", "chunking": "sent"}
    )
    archive = tmp_path / "acme.zip"
    call_command("export_project", "acme", "-o", str(archive))
    call_command("import_project", str(archive), "--slug", "acme-copy")
    assert picture("acme-copy") == picture("acme") != []


def test_answer_judgements_and_their_history_travel_in_a_backup(answer_run, tmp_path):
    from answers.metrics import run_scores
    from answers.models import AnswerJudgment, AnswerJudgmentHistory, AnswerRun

    from .test_metrics import judge_q1

    judge_q1(answer_run, answer_run["annotator"], {"n1": 2, "n2": 1, "n3": 0}, [2, 1, 0], 1, 2)
    archive = tmp_path / "acme.zip"
    call_command("export_project", "acme", "-o", str(archive))
    call_command("import_project", str(archive), "--slug", "acme-copy")

    def kept(slug):
        return sorted(
            AnswerJudgment.objects.filter(answer__run__project__slug=slug).values_list(
                "aspect", "value", "annotator__username"
            )
        )

    assert kept("acme-copy") == kept("acme") != []
    assert (
        AnswerJudgmentHistory.objects.filter(answer__run__project__slug="acme-copy").count()
        == AnswerJudgmentHistory.objects.filter(answer__run__project__slug="acme").count()
    )
    copy = AnswerRun.objects.get(project__slug="acme-copy")
    assert run_scores(copy).summary() == run_scores(answer_run["run"]).summary()
