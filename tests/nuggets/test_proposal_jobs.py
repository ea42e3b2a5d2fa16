"""Nugget proposals against an OpenAI-compatible server on loopback, through the judges' job
machinery: ``propose_nuggets`` and the query page's button plan a job (its cost first), the
worker writes proposals whose offsets are the passages sent (never the model's), refuses a
citation of a passage that was not sent, records failures with their kind, counts calls and
tokens, resumes and retries; a lead's decisions on them are kept in history."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Document, Query
from judges.engine import execute_job
from judges.models import JobKind, JobStatus, Judge, JudgeJob, PairStatus
from judges.services import resume_job
from nuggets.models import Nugget, NuggetHistory, NuggetProposal
from nuggets.proposal_jobs import plan_proposals, start_proposals
from nuggets.proposals import decide
from tests.judges.conftest import KEY, KEY_ENV, Sleeps, fake_judge
from tests.judges.fake_llm import FakeLLM

pytestmark = pytest.mark.django_db

TEXT = "Lift comes from the pressure difference over the wing. Stall follows separation."


@pytest.fixture
def proposing(personas, monkeypatch, settings):
    """Queries q1 (two relevant passages), q2 (UNSENT: its answer cites a passage that was
    not sent), q3 (PROSE: its answer is not JSON), q4 (nothing relevant labelled)."""
    settings.ASSAY_JUDGE_BACKOFF_SECONDS = 0.01
    project = personas["project"]
    doc = Document.objects.create(project=project, doc_id="a", text=TEXT)
    queries = {
        qid: Query.objects.create(project=project, qid=qid, text=text)
        for qid, text in (
            ("q1", "Where does lift come from?"),
            ("q2", "When does a wing stall? UNSENT"),
            ("q3", "What is lift? PROSE"),
            ("q4", "What is drag?"),
        )
    }
    annotator = personas["annotator"]
    for qid in ("q1", "q2", "q3"):
        change_label(
            query=queries[qid],
            annotator=annotator,
            evidence=Evidence.for_passage(doc, 0, 54),
            grade=3,
        )
    change_label(
        query=queries["q1"],
        annotator=annotator,
        evidence=Evidence.for_passage(doc, 55, 80),
        grade=2,
    )
    change_label(  # not relevant: never sent
        query=queries["q4"], annotator=annotator, evidence=Evidence.for_document(doc), grade=0
    )
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeLLM(KEY) as server:
        judge = fake_judge(project, server, budget=100, timeout_seconds=5)
        yield {
            "project": project,
            "doc": doc,
            "q": queries,
            "server": server,
            "judge": judge,
            **personas,
        }


def run(job):
    return execute_job(job.pk, sleep=Sleeps())


def test_the_command_prints_the_cost_then_the_worker_writes_proposals_from_the_passages(
    proposing,
):
    out = io.StringIO()
    call_command(
        "propose_nuggets",
        "acme",
        "fake",
        "--queries",
        "q1",
        "q2",
        "q3",
        "q4",
        "--max",
        "3",
        stdout=out,
    )
    said = out.getvalue()
    assert "1 queries without relevant evidence labelled by people, left out: q4" in said
    assert "3 queries to ask for at most 3 nuggets each" in said and "prompt tokens" in said
    job = JudgeJob.objects.get()
    assert (job.kind, job.max_nuggets, job.n_pairs, job.status) == ("nuggets", 3, 3, "pending")
    assert f"job {job.pk} queued" in said
    job = run(job)
    server = proposing["server"]
    assert job.status == JobStatus.DONE
    # One call per query, each asked with room for a list of nuggets.
    assert job.calls == len(server.requests) == 3
    assert all(r["request"]["max_tokens"] >= 1500 for r in server.requests)
    assert job.prompt_tokens == sum(len(r["prompt"]) // 4 for r in server.requests)
    pairs = {p.query.qid: p for p in job.pairs.select_related("query")}
    assert {q: p.status for q, p in pairs.items()} == {
        "q1": PairStatus.JUDGED,
        "q2": PairStatus.JUDGED,
        "q3": PairStatus.FAILED,
    }
    # The model's own offsets (999–1999 of "made-up") are ignored: the passages' are kept.
    q1 = NuggetProposal.objects.filter(query=proposing["q"]["q1"]).order_by("pk")
    assert [(p.text, p.importance, p.evidence, p.job_id) for p in q1] == [
        (
            "Fact stated by passage 1",
            "vital",
            [{"doc_id": "a", "start": 0, "end": 54, "passage": 1}],
            job.pk,
        ),
        (
            "Fact stated by passage 2",
            "okay",
            [{"doc_id": "a", "start": 55, "end": 80, "passage": 2}],
            job.pk,
        ),
    ]
    assert all(p.judge_version == proposing["judge"].current for p in q1)
    # q2's answer cites passage 8 of 1: that nugget is refused, the other kept.
    q2 = NuggetProposal.objects.filter(query=proposing["q"]["q2"])
    assert [p.text for p in q2] == ["Fact stated by passage 1"]
    assert (pairs["q2"].detail.code, pairs["q2"].detail.params) == (
        "proposals.unsent",
        {"n": 2, "passage": 8},
    )
    # q3's prose is a malformed answer: nothing proposed, the reason kept.
    assert (pairs["q3"].failure, pairs["q3"].detail.code) == ("malformed", "proposals.not_json")
    assert not NuggetProposal.objects.filter(query=proposing["q"]["q3"]).exists()
    assert not Nugget.objects.exists()  # proposals wait for a lead


def test_failed_queries_are_retried_and_queries_proposed_for_are_skipped(proposing):
    plan = plan_proposals(proposing["judge"], qids=["q1", "q3"])
    job = run(start_proposals(plan, enqueue=False))
    assert job.pairs.filter(status=PairStatus.FAILED).count() == 1
    Query.objects.filter(qid="q3").update(text="What is lift?")  # the model answers now
    assert resume_job(job, failed=True, enqueue=False) == 1
    job = run(job)
    assert job.pairs.filter(status=PairStatus.JUDGED).count() == 2
    assert job.calls == 3 and NuggetProposal.objects.filter(query__qid="q3").count() == 1
    # This version has proposed for both: a new plan asks nothing, a default plan skips them.
    again = plan_proposals(proposing["judge"], qids=["q1", "q3"])
    assert (again.asked, again.already) == ([], ["q1", "q3"])
    default = plan_proposals(proposing["judge"])
    assert [q.qid for q, _p in default.asked] == ["q2"]  # q4: nothing relevant to send
    # A job planned before another wrote the same query's proposals skips it when it runs.
    late = start_proposals(plan_proposals(proposing["judge"], qids=["q2"]), enqueue=False)
    run(start_proposals(plan_proposals(proposing["judge"], qids=["q2"]), enqueue=False))
    late = run(late)
    assert list(late.pairs.values_list("status", flat=True)) == [PairStatus.SKIPPED]
    assert late.calls == 0


def test_a_missing_key_and_a_refused_key_fail_every_query_with_their_reason(proposing, monkeypatch):
    Judge.objects.filter(pk=proposing["judge"].pk).update(concurrency=1)
    monkeypatch.delenv(KEY_ENV)
    plan = plan_proposals(proposing["judge"], qids=["q1", "q2", "q3"])
    job = run(start_proposals(plan, enqueue=False))
    assert set(job.pairs.values_list("failure", flat=True)) == {"no_key"}
    assert job.calls == 0 and not proposing["server"].requests
    monkeypatch.setenv(KEY_ENV, "sk-wrong")
    assert resume_job(job, failed=True, enqueue=False) == 3
    job = run(job)
    assert set(job.pairs.values_list("failure", flat=True)) == {"auth"}
    assert job.calls == 1  # a refused key ends the rest without more calls
    assert not NuggetProposal.objects.exists()


def test_a_refusal_is_a_failure_of_its_kind_said_as_a_refusal_to_answer(proposing):
    query = Query.objects.create(project=proposing["project"], qid="q5", text="Why? REFUSE")
    change_label(
        query=query,
        annotator=proposing["annotator"],
        evidence=Evidence.for_passage(proposing["doc"], 0, 54),
        grade=3,
    )
    job = run(start_proposals(plan_proposals(proposing["judge"], qids=["q5"]), enqueue=False))
    pair = job.pairs.get()
    assert (pair.status, pair.failure, pair.detail.code) == (
        PairStatus.FAILED,
        "refusal",
        "judge_call.refusal_answer",
    )
    assert str(pair.detail) == "the model refused to answer"


def test_bad_command_input_is_refused_and_nothing_is_queued(proposing):
    for args, message in (
        (["acme", "nobody"], "no judge"),
        (["acme", "fake", "--queries", "q1", "zz"], "unknown query ids: zz"),
        (["acme", "fake", "--max", "0"], "1–50"),
        (["nope", "fake"], "no project"),
    ):
        with pytest.raises(CommandError, match=message):
            call_command("propose_nuggets", *args, stdout=io.StringIO())
    out = io.StringIO()
    call_command("propose_nuggets", "acme", "fake", "--queries", "q4", stdout=out)
    assert "nothing to ask" in out.getvalue()
    assert not JudgeJob.objects.exists()


def test_the_query_page_button_starts_a_job_and_leads_decide_in_history(proposing, login):
    query = proposing["q"]["q1"]
    page = reverse("annotator:query_detail", args=["acme", query.pk])
    url = reverse("nuggets:propose", args=["acme", query.pk])
    judge = proposing["judge"].pk
    adjudicator = login(proposing["adjudicator"])
    assert 'id="nugget-propose-form"' not in adjudicator.get(page).content.decode()
    assert adjudicator.post(url, {"judge": judge, "max": 4}).status_code == 403
    owner = login(proposing["owner"])
    assert 'id="nugget-propose-form"' in owner.get(page).content.decode()
    assert owner.post(url, {"judge": judge, "max": 0}).status_code == 400
    without = reverse("nuggets:propose", args=["acme", proposing["q"]["q4"].pk])
    refused = owner.post(without, {"judge": judge, "max": 4})
    assert refused.status_code == 400 and "no relevant evidence" in refused.content.decode()
    assert not JudgeJob.objects.exists()
    response = owner.post(url, {"judge": judge, "max": 4})
    job = JudgeJob.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("judges:job", args=["acme", job.pk])
    assert (job.kind, job.max_nuggets, job.created_by) == (
        JobKind.NUGGETS,
        4,
        proposing["owner"],
    )
    run(job)
    status = owner.get(response["Location"]).content.decode()
    assert "Nugget proposals" in status and 'id="count-judged">1<' in status
    again = owner.post(url, {"judge": judge, "max": 4})
    assert again.status_code == 400 and "already" in again.content.decode()
    # A lead accepts one as it is, edits another, and both decisions are in history.
    first, second = NuggetProposal.objects.order_by("pk")
    decide(first, "accept", by=proposing["adjudicator"])
    panel = reverse("nuggets:query_nuggets", args=["acme", query.pk])
    adjudicator = login(proposing["adjudicator"])
    adjudicator.post(
        panel,
        {"action": "reject", "proposal": second.pk},
        HTTP_HX_REQUEST="true",
    )
    events = list(NuggetHistory.objects.values_list("event", "detail"))
    assert events == [
        ("create", {}),
        ("accept", {"proposal": first.pk, "edited": False}),
        ("reject", {"proposal": second.pk}),
    ]
    assert list(Nugget.objects.get().evidence.values_list("start", "end")) == [(0, 54)]
