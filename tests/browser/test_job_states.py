"""A judging job's page in a real browser, English and Chinese: paused by a stopped
worker, taken over, failed pairs with the model's raw reply; screenshots of each."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils import timezone

from judges.engine import WORKER_STOPPED, execute_job
from judges.models import JobStatus, JudgeJob
from judges.services import plan_job, start_job
from tests.conftest import PASSWORD
from tests.judges.conftest import Sleeps, judging  # noqa: F401  (the fixture)

from .conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"


@pytest.mark.parametrize(
    ("language", "paused", "gone"),
    [
        ("en-US", "Paused: worker stopped", "Its worker stopped answering"),
        ("zh-CN", "已暂停：工作进程已停止", "它的工作进程已无响应"),
    ],
)
def test_job_page_paused_taken_over_and_raw_replies(
    browser,
    live_server,
    judging,  # noqa: F811  (the fixture imported above)
    language,
    paused,
    gone,
):
    job = start_job(plan_job(judging["judge"], level="chunk", chunking="c"), enqueue=False)
    job = execute_job(job.pk, sleep=Sleeps())
    JudgeJob.objects.filter(pk=job.pk).update(
        status=JobStatus.PAUSED, error=WORKER_STOPPED(), takeovers=1, worker="worker-a:4242"
    )
    context = browser.new_context(locale=language, viewport={"width": 1366, "height": 900})
    page = context.new_page()
    folder = SHOTS / language.split("-")[0]
    folder.mkdir(parents=True, exist_ok=True)
    log_in(page, live_server, "alice", PASSWORD)
    url = live_server.url + reverse("judges:job", args=["acme", job.pk])
    page.goto(url)
    assert paused in page.inner_text("#job-paused")
    assert page.is_visible("#job-takeovers") and page.is_visible(".raw-reply")
    assert "I would say a 2" in page.inner_text("#job-failures")
    page.screenshot(path=str(folder / "judge-job-paused.png"), full_page=True)
    JudgeJob.objects.filter(pk=job.pk).update(
        status=JobStatus.RUNNING, error=None, lease_until=timezone.now() - timedelta(seconds=5)
    )
    page.goto(url)
    assert gone in page.inner_text("#job-worker-gone")
    page.screenshot(path=str(folder / "judge-job-worker-gone.png"), full_page=True)
    context.close()
