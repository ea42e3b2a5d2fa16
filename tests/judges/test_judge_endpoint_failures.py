"""A judge configured on the web learns one sentence when its endpoint fails — "the endpoint
did not answer as an OpenAI-compatible server" — whatever answered: a closed port, an
HTTP error, a server that is not OpenAI's kind. Its job page, failure list and counters
cannot tell them apart (the port scan of the security review). The operator's judges keep
their precise reasons."""

from __future__ import annotations

import contextlib
import importlib
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.apps import apps
from django.urls import reverse

from judges.client import NOT_OPENAI, SERVER_ERROR
from judges.engine import execute_job
from judges.models import Judge, JudgePair, JudgeVersion, PairStatus
from judges.services import plan_job, start_job

from .conftest import KEY_ENV, Sleeps
from .fake_llm import serving_thread

pytestmark = pytest.mark.django_db

SENTENCE = "the endpoint did not answer as an OpenAI-compatible server"


class PlainServer:
    """Something listening that is not an OpenAI-compatible server: 200 with a web page."""

    def __init__(self):
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.rfile.read(int(self.headers.get("Content-Length", 0)))
                    body = b"<html><body>PostgreSQL admin 16.2</body></html>"
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        serving_thread(self.httpd).start()
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def web(judging, monkeypatch, settings):
    """The fixture's judge as one configured on the web, its host allowed by the operator."""
    monkeypatch.setenv(f"{KEY_ENV}_PROJECTS", "acme")
    settings.ASSAY_JUDGE_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.ASSAY_JUDGE_ATTEMPTS = 2
    Judge.objects.filter(pk=judging["judge"].pk).update(configured_by_operator=False)
    judging["judge"].refresh_from_db()
    return judging


def run(judge, model=None, **changes):
    """A job over q1 after changing the judge behind the form's back (the model is its
    current version's)."""
    Judge.objects.filter(pk=judge.pk).update(**changes)
    if model is not None:
        JudgeVersion.objects.filter(pk=judge.current.pk).update(model=model)
    judge.refresh_from_db()
    job = start_job(
        plan_job(judge, scope="pool", level="chunk", chunking="c", qids=["q1"]), enqueue=False
    )
    return execute_job(job.pk, sleep=Sleeps())


def failure_table(client, job) -> str:
    page = client.get(reverse("judges:job", args=["acme", job.pk])).content.decode()
    found = re.search(r'<table class="table compact" id="job-failures">.*?</table>', page, re.S)
    return re.sub(r"<td>d\d+#0</td>|<td>d\d+</td>", "", found.group(0))


def test_every_endpoint_failure_says_one_sentence_and_counts_alike(web, login):
    client = login(web["owner"])
    plain = PlainServer()
    try:
        jobs = {
            "closed port": run(web["judge"], base_url="http://127.0.0.1:9/v1"),
            "not OpenAI": run(web["judge"], base_url=plain.base_url),
            "HTTP 404": run(web["judge"], base_url=web["server"].base_url, model="no-such-model"),
        }
    finally:
        plain.close()
    web["server"].requests.clear()
    tables, counters = set(), set()
    for name, job in jobs.items():
        pairs = list(job.pairs.all())
        assert {(p.status, p.failure) for p in pairs} == {(PairStatus.FAILED, "endpoint")}, name
        assert {str(p.detail) for p in pairs} == {SENTENCE}, name
        table = failure_table(client, job)
        for word in ("HTTP", "404", "connect", "refused", "unreachable", "readable"):
            assert word not in table, (name, word)
        tables.add(table)
        counters.add((job.calls, job.retries, tuple(sorted(p.attempts for p in pairs))))
    assert len(tables) == 1 and len(counters) == 1, counters


def test_the_key_refused_says_the_same_sentence_on_the_web(web, monkeypatch):
    monkeypatch.setenv("ASSAY_JUDGE_KEY_OTHER", "sk-wrong-key-123456")
    monkeypatch.setenv("ASSAY_JUDGE_KEY_OTHER_PROJECTS", "acme")
    job = run(web["judge"], api_key_env="ASSAY_JUDGE_KEY_OTHER")
    assert {str(p.detail) for p in job.pairs.all()} == {SENTENCE}


def test_the_sentence_is_chinese_on_a_chinese_page(web, login):
    job = run(web["judge"], base_url="http://127.0.0.1:9/v1")
    page = login(web["owner"]).get(
        reverse("judges:job", args=["acme", job.pk]), HTTP_ACCEPT_LANGUAGE="zh-CN"
    )
    assert SENTENCE not in page.content.decode()
    assert "OpenAI" in page.content.decode()  # the translated sentence names the protocol


def test_the_operators_judge_keeps_the_precise_reason(judging):
    judge = judging["judge"]
    assert judge.configured_by_operator
    job = run(judge, model="no-such-model")
    assert set(job.pairs.values_list("failure", flat=True)) == {"not_found"}


def test_failures_stored_before_are_rewritten_for_web_judges(web):
    migration = importlib.import_module("judges.migrations.0006_endpoint_failures")
    job = run(web["judge"], base_url="http://127.0.0.1:9/v1")
    JudgePair.objects.filter(job=job).update(
        failure="server_error", detail=SERVER_ERROR(status=502).as_json()
    )
    migration.one_sentence(apps, None)
    assert {(p.failure, p.detail) for p in job.pairs.all()} == {("endpoint", NOT_OPENAI())}
