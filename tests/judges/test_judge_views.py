"""Judge pages: who sees what, configuring, starting, watching, cancelling, calibration."""

from __future__ import annotations

import pytest
from django.urls import reverse

from judges.engine import execute_job
from judges.models import JobStatus, Judge, JudgeJob, PairStatus
from judges.services import plan_job, start_job

from .conftest import KEY, KEY_ENV, Sleeps

pytestmark = pytest.mark.django_db


@pytest.fixture
def finished_job(judging):
    job = start_job(
        plan_job(judging["judge"], scope="holes", level="chunk", chunking="c"), enqueue=False
    )
    return execute_job(job.pk, sleep=Sleeps())


def urls(judging, job):
    slug, judge = "acme", judging["judge"].pk
    return {
        "list": reverse("judges:list", args=[slug]),
        "detail": reverse("judges:detail", args=[slug, judge]),
        "estimate": reverse("judges:estimate", args=[slug, judge])
        + "?scope=holes&level=chunk&chunking=c",
        "job": reverse("judges:job", args=[slug, job.pk]),
        "calibration": reverse("judges:calibration", args=[slug]),
    }


READ = {"list", "calibration"}


@pytest.mark.parametrize("persona", ["owner", "adjudicator", "viewer", "annotator", "annotator2"])
def test_owners_configure_leads_and_viewers_read_calibration_annotators_see_nothing(
    login, judging, finished_job, persona
):
    client = login(judging[persona])
    for name, url in urls(judging, finished_job).items():
        status = client.get(url).status_code
        if persona == "owner" or (persona in ("adjudicator", "viewer") and name in READ):
            assert status == 200, (persona, name)
        else:
            assert status == 403, (persona, name)
    for name in ("start", "cancel", "resume"):
        args = ["acme", judging["judge"].pk if name == "start" else finished_job.pk]
        status = client.post(
            reverse(f"judges:{name}", args=args), {"scope": "holes", "level": "chunk"}
        ).status_code
        assert status in ((302, 400) if persona == "owner" else (403,)), (persona, name, status)


def test_outsider_gets_404(login, judging, finished_job):
    client = login(judging["outsider"])
    for url in urls(judging, finished_job).values():
        assert client.get(url).status_code == 404


def test_blind_annotators_see_no_judge_label_nor_link(login, judging, finished_job):
    client = login(judging["annotator"])
    page = client.get(
        reverse("annotator:label_query", args=["acme", judging["queries"][0].pk])
    ).content.decode()
    assert "reason for grade" not in page
    assert finished_job.version.annotator.username not in page
    assert reverse("judges:list", args=["acme"]) not in page


def test_owner_adds_a_judge_from_the_page(login, judging, monkeypatch, public_dns):
    monkeypatch.setenv("ASSAY_JUDGE_KEY_WEB_PROJECTS", "acme")
    client = login(judging["owner"])
    data = {
        "slug": "web",
        "name": "Web judge",
        "base_url": "https://llm.example.org/v1",
        "model": "m",
        "api_key_env": "ASSAY_JUDGE_KEY_WEB",
        "prompt": "{{query}} {{passage}} JSON",
        "temperature": "0",
        "max_tokens": "50",
        "timeout_seconds": "10",
        "concurrency": "2",
        "rpm": "0",
        "budget": "10",
    }
    response = client.post(reverse("judges:list", args=["acme"]), data)
    assert response.status_code == 302
    judge = Judge.objects.get(slug="web")
    assert judge.current.number == 1
    bad = client.post(
        reverse("judges:list", args=["acme"]), {**data, "slug": "web2", "api_key_env": KEY}
    )
    assert bad.status_code == 400 and not Judge.objects.filter(slug="web2").exists()


def test_editing_the_prompt_makes_a_new_version(login, judging):
    client = login(judging["owner"])
    judge = judging["judge"]
    data = {
        "name": judge.name,
        "base_url": judge.base_url,
        "model": judge.model,
        "api_key_env": KEY_ENV,
        "prompt": judge.prompt + "\nBe strict.",
        "temperature": "0",
        "max_tokens": "200",
        "timeout_seconds": "0.3",
        "concurrency": "3",
        "rpm": "0",
        "budget": "500",
    }
    assert client.post(reverse("judges:detail", args=["acme", judge.pk]), data).status_code == 302
    assert judge.current.number == 2


def test_estimate_before_start_then_start_queues_a_job(
    login, judging, django_capture_on_commit_callbacks
):
    client = login(judging["owner"])
    estimate = client.get(
        reverse("judges:estimate", args=["acme", judging["judge"].pk]),
        {"scope": "holes", "level": "chunk", "chunking": "c"},
        HTTP_HX_REQUEST="true",
    )
    body = estimate.content.decode()
    assert estimate.status_code == 200 and "<html" not in body
    assert 'data-calls="21"' in body and "21 pairs to judge" in body
    assert (
        client.get(
            reverse("judges:estimate", args=["acme", judging["judge"].pk]), {"scope": "x"}
        ).status_code
        == 400
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("judges:start", args=["acme", judging["judge"].pk]),
            {"scope": "holes", "level": "chunk", "chunking": "c"},
        )
    job = JudgeJob.objects.get()
    assert response.status_code == 302 and response["Location"].endswith(f"/judges/jobs/{job.pk}/")
    assert job.status == JobStatus.PENDING and job.n_pairs == 21


def test_job_page_shows_progress_counters_failures_and_polls_while_running(
    login, judging, finished_job
):
    client = login(judging["owner"])
    url = reverse("judges:job", args=["acme", finished_job.pk])
    body = client.get(url).content.decode()
    assert f'id="count-calls">{finished_job.calls}<' in body
    assert "Malformed answer" in body and "Refusal" in body
    assert "every 2s" not in body  # done: no more polling
    partial = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in partial and 'id="job-progress"' in partial
    pending = start_job(
        plan_job(judging["judge"], scope="pool", level="chunk", chunking="c"), enqueue=False
    )
    assert (
        "every 2s" in client.get(reverse("judges:job", args=["acme", pending.pk])).content.decode()
    )


def test_cancel_and_retry_from_the_page(login, judging, finished_job):
    client = login(judging["owner"])
    pending = start_job(
        plan_job(judging["judge"], scope="pool", level="chunk", chunking="c"), enqueue=False
    )
    client.post(reverse("judges:cancel", args=["acme", pending.pk]))
    pending.refresh_from_db()
    assert pending.status == JobStatus.CANCELLED
    failed = finished_job.pairs.filter(status=PairStatus.FAILED).count()
    response = client.post(
        reverse("judges:resume", args=["acme", finished_job.pk]), {"failed": "1"}
    )
    assert response.status_code == 302
    finished_job.refresh_from_db()
    assert finished_job.status == JobStatus.PENDING
    assert finished_job.pairs.filter(status=PairStatus.PENDING).count() == failed


def test_calibration_page_for_a_viewer(login, judging, finished_job):
    from annotator.evidence import Evidence
    from annotator.labels import change_label

    chunks, queries = judging["chunks"], judging["queries"]
    for c, grade in ((2, 1), (3, 0), (4, 2)):
        change_label(
            query=queries[0],
            annotator=judging["annotator"],
            evidence=Evidence.for_chunk(chunks[c]),
            grade=grade,
        )
    client = login(judging["viewer"])
    body = client.get(
        reverse("judges:calibration", args=["acme"]), {"a": "people", "b": "judge:fake"}
    ).content.decode()
    for region in (
        "calibration-summary",
        "calibration-confusion",
        "calibration-queries",
        "calibration-pairs",
    ):
        assert f'id="{region}"' in body
    assert "Krippendorff" in body
    assert (
        client.get(reverse("judges:calibration", args=["acme"]), {"b": "judge:nobody"}).status_code
        == 400
    )
    assert (
        client.get(reverse("judges:calibration", args=["acme"]), {"a": "people,bogus"}).status_code
        == 400
    )


def test_judge_pages_in_chinese(login, judging, finished_job):
    client = login(judging["owner"])
    zh = {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9"}
    listing = client.get(reverse("judges:list", args=["acme"]), **zh).content.decode()
    assert "LLM 评审" in listing and "添加评审模型" in listing
    job = client.get(reverse("judges:job", args=["acme", finished_job.pk]), **zh).content.decode()
    assert "回答格式不对" in job and "重试失败的对" in job


def test_failure_details_job_errors_and_refusals_are_shown_in_chinese(login, judging, finished_job):
    """Why a pair failed, why a job stopped and why a job cannot start are problems (codes
    and values), said in the reader's language; the command line keeps them in English."""
    from judges.engine import INTERNAL_ERROR

    zh = {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9"}
    client = login(judging["owner"])
    details = {str(p.detail) for p in finished_job.pairs.filter(status=PairStatus.FAILED)}
    assert "the answer is neither JSON nor a digit 0–3" in details  # English: commands, logs
    JudgeJob.objects.filter(pk=finished_job.pk).update(error=INTERNAL_ERROR())
    page = client.get(reverse("judges:job", args=["acme", finished_job.pk]), **zh)
    body = page.content.decode()
    assert (
        "回答既不是 JSON，也不是 0–3 的数字" in body
        and "内部错误；请查看后台任务进程的日志" in body
    )
    assert "neither JSON nor a digit" not in body and "see the worker's log" not in body
    estimate = client.get(
        reverse("judges:estimate", args=["acme", judging["judge"].pk]),
        {"scope": "holes", "level": "chunk", "chunking": "c", "queries": "q1 q404"},
        **zh,
    )
    assert estimate.status_code == 400
    assert "未知的查询 id：q404" in estimate.content.decode()


def test_job_page_shows_paused_taken_over_dead_worker_and_raw_replies_in_both_languages(
    login, judging, finished_job
):
    from datetime import timedelta

    from django.utils import timezone

    from judges.engine import WORKER_STOPPED

    client = login(judging["owner"])
    url = reverse("judges:job", args=["acme", finished_job.pk])
    zh = {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9"}
    # Failed pairs keep what the model said.
    malformed = finished_job.pairs.filter(failure="malformed").first()
    assert "I would say a 2" in malformed.raw_reply
    for headers, raw in (({}, "Raw reply"), (zh, "原始回复")):
        body = client.get(url, **headers).content.decode()
        assert raw in body and "I would say a 2" in body
    JudgeJob.objects.filter(pk=finished_job.pk).update(
        status=JobStatus.PAUSED, error=WORKER_STOPPED(), takeovers=2, worker="host-a:41"
    )
    body = client.get(url).content.decode()
    assert "Paused: worker stopped" in body and "Taken over 2 times" in body
    assert "host-a:41" in body
    body = client.get(url, **zh).content.decode()
    assert "已暂停：工作进程已停止" in body and "已从停止的工作进程接手 2 次" in body
    assert "worker stopped" not in body
    # Running, but its worker's lease has passed: said so, with pause, resume and cancel.
    JudgeJob.objects.filter(pk=finished_job.pk).update(
        status=JobStatus.RUNNING, error=None, lease_until=timezone.now() - timedelta(seconds=5)
    )
    body = client.get(url).content.decode()
    assert 'id="job-worker-gone"' in body
    assert all(f'id="job-{b}"' in body for b in ("resume", "pause", "cancel"))
    assert "它的工作进程已无响应" in client.get(url, **zh).content.decode()
    assert client.post(reverse("judges:resume", args=["acme", finished_job.pk])).status_code == 302
    finished_job.refresh_from_db()
    assert finished_job.status == JobStatus.PENDING
