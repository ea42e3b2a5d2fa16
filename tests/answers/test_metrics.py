"""Answer runs measured from judgements and gold evidence: the run's numbers stand on
people's judgements (a lead's adjudication first) and citation validity equals a
computation of its own from the exported gold spans."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from answers.judging import Target, change_judgment
from answers.metrics import answer_detail, citation_validity, run_scores
from answers.models import AnswerAdjudication, Aspect, Citation
from gold.policy import ConsensusPolicy
from gold.services import freeze_gold_set

from .conftest import DOC_A, grade

pytestmark = pytest.mark.django_db


def gold_evidence(answer_run, assessor):
    """a[0:16] grade 3 (q1), a[17:46] grade 0 (q1), b[21:45] grade 2 (q2), and a grade-2
    label on a for q2 (another query's evidence never makes a q1 citation valid)."""
    q1, q2 = answer_run["queries"]["q1"], answer_run["queries"]["q2"]
    a, b = answer_run["docs"]["a"], answer_run["docs"]["b"]
    grade(q1, assessor, a, 0, 16, 3)
    grade(q1, assessor, a, 17, 46, 0)
    grade(q2, assessor, b, 21, 45, 2)
    grade(q2, assessor, a, 0, len(DOC_A), 2)


def test_citation_validity_equals_an_independent_computation_from_exported_gold(
    answer_run, assessor, tmp_path
):
    gold_evidence(answer_run, assessor)
    project = answer_run["project"]
    citations = list(
        Citation.objects.filter(answer__run=answer_run["run"])
        .order_by("pk")
        .select_related("document", "answer__query")
    )
    valid = citation_validity(
        project, [(c.answer.query_id, c.document_id, c.start, c.end) for c in citations]
    ).tolist()
    # q1: a[0:16] valid; a[17:46] graded 0 → not; b whole: no q1 evidence → not.
    # q2: b[21:45] valid.
    assert valid == [True, False, False, True]
    gold = freeze_gold_set(
        project,
        "g",
        policy=ConsensusPolicy(),
        annotators=[assessor.username],
    )
    out = tmp_path / "gold.jsonl"
    call_command("export_gold", project.slug, gold.name, "--output", str(out))
    relevant: dict[str, list[tuple[str, int, int]]] = {}
    for line in out.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        relevant[entry["qid"]] = [
            (e["doc_id"], e["start"], e["end"]) for e in entry["evidence"] if e["relevant"]
        ]
    independent = [
        any(
            doc == c.document.doc_id and start < c.end and c.start < end
            for doc, start, end in relevant.get(c.answer.query.qid, [])
        )
        for c in citations
    ]
    assert independent == valid


def judge_q1(answer_run, annotator, nugget_values, support, needs, crag):
    answer = answer_run["run"].answers.get(query__qid="q1")
    for key, value in nugget_values.items():
        target = Target(Aspect.NUGGET, answer_run["nuggets"][key].pk)
        change_judgment(answer=answer, annotator=annotator, target=target, value=value)
    citations = list(Citation.objects.filter(answer=answer).order_by("sentence__number", "number"))
    for citation, value in zip(citations, support, strict=True):
        change_judgment(
            answer=answer,
            annotator=annotator,
            target=Target(Aspect.SUPPORT, citation.pk),
            value=value,
        )
    uncited = answer.sentences.get(number=3)
    change_judgment(
        answer=answer,
        annotator=annotator,
        target=Target(Aspect.NEEDS_CITATION, uncited.pk),
        value=needs,
    )
    change_judgment(answer=answer, annotator=annotator, target=Target(Aspect.CRAG), value=crag)
    return answer


def test_run_scores_from_people_judgements_worked_by_hand(answer_run, assessor):
    gold_evidence(answer_run, assessor)
    anna, arno = answer_run["annotator"], answer_run["annotator2"]
    # anna: n1 support, n2 partial, n3 not; citations full, partial, none; the uncited
    # sentence needs one; perfect. arno differs on n2 (support) and the grade (missing):
    # the low median keeps anna's partial and arno's missing.
    answer = judge_q1(answer_run, anna, {"n1": 2, "n2": 1, "n3": 0}, [2, 1, 0], 1, 3)
    judge_q1(answer_run, arno, {"n1": 2, "n2": 2, "n3": 0}, [2, 1, 0], 1, 1)
    scores = run_scores(answer_run["run"])
    assert scores.qids == ["q1", "q2"]
    row = scores.per_query()[0]
    # All strict 1/3, all weak (1 + .5 + 0)/3 = .5, vital (n1) 1 and 1.
    assert row["all_strict"] == pytest.approx(1 / 3, abs=1e-6)
    assert row["all_weak"] == 0.5
    assert (row["vital_strict"], row["vital_weak"]) == (1.0, 1.0)
    # Sentences: 1 cited (full), 2 cited (partial, none), 3 uncited and needing one.
    assert row["coverage_needed"] == pytest.approx(2 / 3, abs=1e-6)
    assert row["coverage_all"] == pytest.approx(2 / 3, abs=1e-6)
    assert row["support_precision_strict"] == pytest.approx(1 / 3, abs=1e-6)
    assert row["support_precision_weak"] == 0.5
    assert row["citation_recall"] == pytest.approx(1 / 3, abs=1e-6)
    assert row["citation_validity"] == pytest.approx(1 / 3, abs=1e-6)
    assert (row["crag"], row["correct"]) == (0.0, 0.0)
    # q2: no judgement, so only the measures that need none.
    q2 = scores.per_query()[1]
    assert (q2["coverage_all"], q2["citation_validity"]) == (1.0, 1.0)
    assert q2["all_strict"] is None and q2["crag"] is None
    summary = scores.summary()
    assert summary["citation_validity"] == {"mean": pytest.approx(2 / 3, abs=1e-6), "answers": 2}
    assert summary["crag"] == {"mean": 0.0, "answers": 1}
    # A lead's adjudication replaces the annotators' values.
    AnswerAdjudication.objects.create(
        answer=answer, aspect=Aspect.CRAG, value=3, adjudicator=answer_run["adjudicator"]
    )
    assert run_scores(answer_run["run"]).summary()["crag"]["mean"] == 1.0


def test_judge_versions_do_not_count_as_people(answer_run, assessor):
    judge_q1(answer_run, assessor, {"n1": 2, "n2": 2, "n3": 2}, [2, 2, 2], 0, 3)
    assert run_scores(answer_run["run"]).summary()["crag"] == {"mean": None, "answers": 0}


def test_answer_detail_shows_each_nuggets_status_and_each_citations_support(answer_run, assessor):
    gold_evidence(answer_run, assessor)
    answer = judge_q1(
        answer_run, answer_run["annotator"], {"n1": 2, "n2": 1, "n3": 0}, [2, 1, 0], 1, 2
    )
    detail = answer_detail(answer)
    assert [(n["id"], n["importance"], n["status"]) for n in detail["nuggets"]] == [
        ("n1", "vital", "support"),
        ("n2", "okay", "partial"),
        ("n3", "okay", "not"),
    ]
    cited = [
        (s["number"], c["doc_id"], c["support"], c["valid"])
        for s in detail["sentences"]
        for c in s["citations"]
    ]
    assert cited == [(1, "a", "full", True), (2, "a", "partial", False), (2, "b", "none", False)]
    assert detail["sentences"][2]["needs_citation"] == "yes"
    assert detail["crag"] == "acceptable"
    assert detail["measures"]["crag"] == 0.5
