"""manage.py jobs, job, judge --wait and --dry-run: output and exit codes; plans that
count each level apart; the default prompt in the project's language."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Chunk, Chunking, Document, Query
from judges import services
from judges.engine import execute_job
from judges.follow import follow
from judges.models import JobStatus, JudgeJob, PairStatus
from judges.services import plan_job, prompts_for, start_job
from metrics.models import Run

from .conftest import Sleeps, idle_judge

pytestmark = pytest.mark.django_db


def run_now(monkeypatch):
    """Jobs the command queues run at once, here (the test has no worker)."""
    monkeypatch.setattr(services, "queue", lambda job: execute_job(job.pk, sleep=Sleeps()))


def finished(judging) -> JudgeJob:
    job = start_job(plan_job(judging["judge"], level="chunk", chunking="c"), enqueue=False)
    return execute_job(job.pk, sleep=Sleeps())


def all_good(judging) -> None:
    """Every passage answers with a grade (no failing marker left)."""
    for chunk in judging["chunks"]:
        chunk.document.text = f"A plain passage {chunk.pk}. GRADE=1"
        chunk.document.save()
        chunk.end = len(chunk.document.text)
        chunk.save()


def test_jobs_lists_state_progress_failures_calls_and_worker(judging, capsys):
    job = finished(judging)
    call_command("jobs", "acme")
    out = capsys.readouterr().out
    assert f"judge {job.pk}  fake v1  done  100%" in out
    assert f"calls {job.calls}/{job.budget}" in out and "worker " in out
    assert "failures: empty 2, malformed 4, refusal 2, too_long 2" in out
    call_command("jobs", "acme", "--json")
    body = json.loads(capsys.readouterr().out)
    [state] = [j for j in body["jobs"] if j["kind"] == "judge"]
    assert (state["id"], state["state"], state["left"], state["done"]) == (job.pk, "done", 0, 21)
    assert state["failures"] == {"empty": 2, "malformed": 4, "refusal": 2, "too_long": 2}
    assert (state["calls"], state["budget"]) == (job.calls, job.budget)
    assert state["started"] and state["updated"] and state["worker"]
    raw = {p["raw_reply"] for p in state["failed_pairs"]}
    assert "The passage seems quite relevant, I would say a 2." in raw
    assert "I cannot help with that." in raw
    assert all(p["detail"] for p in state["failed_pairs"])


def test_job_pauses_resumes_cancels_and_retries_failed(judging, capsys):
    pending = start_job(plan_job(judging["judge"], level="chunk", chunking="c"), enqueue=False)
    call_command("job", "acme", str(pending.pk), "--pause")
    pending.refresh_from_db()
    assert pending.status == JobStatus.PAUSED and str(pending.error) == "paused on request"
    assert f"job {pending.pk}: paused" in capsys.readouterr().out
    call_command("job", "acme", str(pending.pk), "--resume")
    pending.refresh_from_db()
    assert pending.status == JobStatus.PENDING
    assert "21 pairs to try" in capsys.readouterr().out
    call_command("job", "acme", str(pending.pk), "--cancel")
    pending.refresh_from_db()
    assert pending.status == JobStatus.CANCELLED
    done = finished(judging)
    failed = done.pairs.filter(status=PairStatus.FAILED).count()
    call_command("job", "acme", str(done.pk), "--retry-failed")
    assert f"{failed} pairs to try" in capsys.readouterr().out
    with pytest.raises(CommandError, match="no judging job 999"):
        call_command("job", "acme", "999", "--pause")
    running = start_job(plan_job(judging["judge"], level="chunk", chunking="c"), enqueue=False)
    JudgeJob.objects.filter(pk=running.pk).update(status=JobStatus.RUNNING, worker="w")
    # Running with no live lease: its worker is gone, so the job pauses at once.
    call_command("job", "acme", str(running.pk), "--pause")
    running.refresh_from_db()
    assert running.status == JobStatus.PAUSED


@pytest.mark.parametrize(
    ("setup", "code"),
    [("good", 0), ("failures", 1), ("budget", 2)],
)
def test_judge_wait_exits_0_done_1_failed_2_paused(judging, monkeypatch, capsys, setup, code):
    run_now(monkeypatch)
    if setup == "good":
        all_good(judging)
    if setup == "budget":
        judging["judge"].budget = 3
        judging["judge"].save()
    args = ["judge", "acme", "fake", "--wait"]
    if code:
        with pytest.raises(SystemExit) as exited:
            call_command(*args)
        assert exited.value.code == code
    else:
        call_command(*args)
    out = capsys.readouterr().out
    job = JudgeJob.objects.get()
    assert f"job {job.pk}: {job.status}, " in out  # plain lines when not on a terminal
    assert "\r" not in out
    if setup == "budget":
        assert "paused" in out and "budget reached: 3 of 3 calls used" in out


def test_wait_draws_a_progress_bar_on_a_terminal(judging):
    job = finished(judging)

    class Terminal(io.StringIO):
        def write(self, text, ending="\n"):
            return super().write(text + ending)

    out = Terminal()
    assert follow(job.pk, out, tty=True, sleep=lambda s: None) == 1
    text = out.getvalue()
    assert "\r[##############################] 21/21 done" in text
    assert "11 judged or skipped, 10 failed" in text


def test_dry_run_prints_plan_cost_and_one_prompt_per_language(judging, capsys):
    Query.objects.filter(qid="q2").update(text="机翼如何产生升力？")
    call_command("judge", "acme", "fake", "--dry-run")
    out = capsys.readouterr().out
    assert "21 pairs to judge" in out and "prompt tokens" in out
    assert out.count("--- prompt (English) ---") == 1
    assert out.count("--- prompt (Simplified Chinese) ---") == 1
    assert "You are a relevance assessor" in out and "How do wings lift?" in out
    assert "你是一名相关性评估员" in out and "机翼如何产生升力？" in out and "0 = 不相关" in out
    assert "dry run: no job started" in out
    assert not JudgeJob.objects.exists()


def test_a_chinese_query_gets_the_chinese_prompt_and_grade_labels(judging):
    Query.objects.filter(qid="q2").update(text="什么是颤振？")
    job = finished(judging)
    prompts = [r["prompt"] for r in judging["server"].requests]
    chinese = [p for p in prompts if "什么是颤振？" in p]
    english = [p for p in prompts if "How do wings lift?" in p]
    assert chinese and english
    assert all("你是一名相关性评估员" in p and "3 = 完全回答" in p for p in chinese)
    assert all("You are a relevance assessor" in p and "3 = Fully answers" in p for p in english)
    # The answers are read the same way: the Chinese pairs are judged too.
    assert job.pairs.filter(query__qid="q2", status=PairStatus.JUDGED).exists()


def test_a_prompt_the_owner_wrote_is_sent_as_written(judging):
    from judges.services import update_judge

    Query.objects.filter(qid="q2").update(text="什么是颤振？")
    version = update_judge(judging["judge"], prompt="Grade {{query}}: {{passage}} as JSON.")
    pairs = plan_job(judging["judge"], level="chunk", chunking="c").pairs
    assert all(p.startswith("Grade ") for p in prompts_for(version, pairs).values())


def test_plans_count_each_level_apart_the_94_pair_document_case(personas):
    """94 document-level pairs; the version's chunk labels on the same queries are not
    document judgements (they were counted as "already judged"), and the reverse."""

    project = personas["project"]
    chunking = Chunking.objects.create(project=project, name="c")
    documents, chunks = [], []
    for i in range(47):
        document = Document.objects.create(project=project, doc_id=f"p{i}", text=f"text {i}")
        documents.append(document)
        chunks.append(
            Chunk.objects.create(
                chunking=chunking, chunk_id=f"p{i}#0", document=document, start=0, end=6
            )
        )
    queries = [
        Query.objects.create(project=project, qid=f"t{n}", text=f"topic {n}") for n in (1, 2)
    ]
    project.pool_depth = 50
    project.save()
    run = Run(project=project, name="docs", level="document")
    rows_q = np.repeat([q.pk for q in queries], len(documents))
    rows_d = np.tile([d.pk for d in documents], len(queries))
    run.set_results(rows_q, rows_d, np.arange(rows_q.size, 0, -1, dtype=float))
    run.save()
    judge = idle_judge(project)
    annotator = judge.current.annotator
    for query in queries:  # 60 chunk labels of this version on the same queries
        for chunk in chunks[:30]:
            change_label(
                query=query, annotator=annotator, evidence=Evidence.for_chunk(chunk), grade=1
            )
    plan = plan_job(judge, scope="pool", level="document")
    assert (len(plan.pairs), plan.already) == (94, 0)
    for document in documents[:5]:  # 5 document labels: those alone count at this level
        change_label(
            query=queries[0],
            annotator=annotator,
            evidence=Evidence.for_document(document),
            grade=2,
        )
    plan = plan_job(judge, scope="pool", level="document")
    assert (len(plan.pairs), plan.already) == (89, 5)
