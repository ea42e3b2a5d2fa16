"""The judge form and job page of a judge configured on the web, in a real browser, in
English and Chinese: a pasted key is refused and never shown back, a loopback endpoint is
refused in one sentence, and an endpoint failure says only that it did not answer as an
OpenAI-compatible server. Screenshots under build/screenshots/judge-security/ (or the
folder ASSAY_SHOTS_DIR names)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from annotator.models import Chunk, Chunking, Document, Query
from judges.engine import execute_job
from judges.models import Judge
from judges.services import create_judge, plan_job, start_job
from metrics.models import Run
from tests.conftest import PASSWORD
from tests.judges.conftest import KEY_ENV, Sleeps

from .conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

OUT = Path(
    os.environ.get("ASSAY_SHOTS_DIR")
    or Path(__file__).resolve().parents[2] / "build" / "screenshots" / "judge-security"
)
VIEWPORT = {"width": 1366, "height": 900}
PASTED_KEY = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1w"


@pytest.fixture
def failed_job(personas, monkeypatch, settings):
    """A web-configured judge whose endpoint is a closed port, and its finished job."""
    import numpy as np

    monkeypatch.setenv(KEY_ENV, "k")
    monkeypatch.setenv(f"{KEY_ENV}_PROJECTS", "acme")
    settings.ASSAY_JUDGE_ATTEMPTS = 1
    project = personas["project"]
    chunking = Chunking.objects.create(project=project, name="c")
    document = Document.objects.create(project=project, doc_id="d0", title="D", text="Wings.")
    chunk = Chunk.objects.create(
        chunking=chunking, chunk_id="d0#0", document=document, start=0, end=6
    )
    query = Query.objects.create(project=project, qid="q1", text="Lift?")
    project.pool_depth = 5
    project.save()
    run = Run(project=project, name="bm25", level="chunk", chunking=chunking)
    run.set_results(np.array([query.pk]), np.array([chunk.pk]), np.array([1.0]))
    run.save()
    judge = create_judge(
        project,
        slug="web",
        name="Web judge",
        base_url="http://127.0.0.1:9/v1",
        model="m",
        api_key_env=KEY_ENV,
        by_operator=True,
    )
    Judge.objects.filter(pk=judge.pk).update(configured_by_operator=False)
    judge.refresh_from_db()
    job = start_job(plan_job(judge, scope="pool", level="chunk", chunking="c"), enqueue=False)
    return execute_job(job.pk, sleep=Sleeps())


@pytest.mark.parametrize("locale,folder", [("en-US", "en"), ("zh-CN", "zh")])
def test_judge_security_screens(browser, live_server, personas, failed_job, locale, folder):
    OUT.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(locale=locale, viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(20000)
    try:
        log_in(page, live_server, personas["owner"].username, PASSWORD)
        base = f"{live_server.url}/p/acme"
        page.goto(f"{base}/judges/")
        page.fill("#id_slug", "pasted")
        page.fill("#id_name", "Pasted key")
        page.fill("#id_base_url", "http://127.0.0.1:8399/v1")
        page.fill("#id_model", "m")
        page.fill("#id_api_key_env", PASTED_KEY)
        page.locator("#judge-form [type=submit]").click()
        page.wait_for_load_state()
        body = page.content()
        assert PASTED_KEY[-12:] not in body
        assert page.input_value("#id_api_key_env") == ""
        assert "ASSAY_JUDGE_KEY_&lt;NAME&gt;" in body
        page.screenshot(path=str(OUT / f"{folder}-key-refused.png"), full_page=True)

        page.fill("#id_api_key_env", KEY_ENV)
        page.locator("#judge-form [type=submit]").click()
        page.wait_for_load_state()
        refused = page.content()
        assert "ASSAY_JUDGE_ALLOWED_HOSTS" in refused
        assert not Judge.objects.filter(slug="pasted").exists()
        page.screenshot(path=str(OUT / f"{folder}-host-refused.png"), full_page=True)

        page.goto(f"{base}/judges/jobs/{failed_job.pk}/")
        table = page.locator("#job-failures").inner_text()
        for word in ("HTTP", "connect", "refused", "unreachable"):
            assert word not in table
        if folder == "en":
            assert "the endpoint did not answer as an OpenAI-compatible server" in table
        else:
            assert "OpenAI 兼容服务器" in table and "did not answer" not in table
        page.screenshot(path=str(OUT / f"{folder}-job-failed.png"), full_page=True)
    finally:
        context.close()
