"""A judge configured on the web reaches only the hosts the operator allows (public ones by
default): no loopback, private, link-local or metadata address, not through a name that
resolves there, nor a redirect, nor a name that resolves elsewhere a second later; no URL
with credentials and not Assay itself. add_judge (the operator's) may name any host."""

from __future__ import annotations

import contextlib
import ipaddress
import socket
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.management import call_command
from django.urls import reverse

from judges.endpoints import HostPolicy, is_public, url_problem
from judges.engine import execute_job
from judges.models import Judge, PairStatus
from judges.services import JudgeError, plan_job, start_job, update_judge

from .conftest import KEY_ENV, Sleeps
from .fake_llm import MODEL, serving_thread

pytestmark = pytest.mark.django_db

REFUSED_URLS = [
    "http://127.0.0.1:8399/v1",
    "http://localhost:5432/v1",
    "http://[::1]:8000/v1",
    "http://169.254.169.254/latest/meta-data",
    "http://[::ffff:127.0.0.1]/v1",
    "http://[::ffff:169.254.169.254]/v1",
    "http://10.0.0.5/v1",
    "http://192.168.1.1/v1",
    "http://[fc00::1]/v1",
    "http://[fe80::1]/v1",
    "http://0.0.0.0:8000/v1",
    "http://[::]/v1",
    "http://evil.example.org/v1",  # the fake DNS says 127.0.0.1
]


@pytest.fixture
def web(judging, monkeypatch, settings, public_dns):
    """The key allowed for acme; the fixture's judge is turned into a web-configured one."""
    monkeypatch.setenv(f"{KEY_ENV}_PROJECTS", "acme")
    settings.ASSAY_JUDGE_ATTEMPTS = 2
    return judging


def form_data(**changes) -> dict:
    return {
        "slug": "web",
        "name": "Web judge",
        "base_url": "https://llm.example.org/v1",
        "model": "m",
        "api_key_env": KEY_ENV,
        "prompt": "{{query}} {{passage}} JSON",
        "temperature": "0",
        "max_tokens": "50",
        "timeout_seconds": "10",
        "concurrency": "2",
        "rpm": "0",
        "budget": "10",
        **changes,
    }


def run(judge):
    job = start_job(
        plan_job(judge, scope="pool", level="chunk", chunking="c", qids=["q1"]), enqueue=False
    )
    return execute_job(job.pk, sleep=Sleeps())


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.0.1",
        "100.64.0.1",
        "169.254.169.254",
        "0.0.0.0",  # noqa: S104
        "224.0.0.1",
        "::1",
        "::",
        "fc00::1",
        "fd12:3456::1",
        "fe80::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "64:ff9b::7f00:1",
        "2002:7f00:1::1",
        "::127.0.0.1",
    ],
)
def test_no_loopback_private_link_local_or_embedded_address_is_public(address):
    assert not is_public(ipaddress.ip_address(address))


def test_public_addresses_are_public():
    for address in ("93.184.215.14", "8.8.8.8", "2606:4700:4700::1111"):
        assert is_public(ipaddress.ip_address(address))


@pytest.mark.parametrize("url", REFUSED_URLS)
def test_the_web_form_refuses_hosts_that_are_not_public(login, web, url):
    client = login(web["owner"])
    response = client.post(reverse("judges:list", args=["acme"]), form_data(base_url=url))
    assert response.status_code == 400, url
    assert not Judge.objects.filter(slug="web").exists()
    # One sentence for every refused host: the page tells nothing of the network.
    assert "Assay does not call this endpoint" in response.content.decode()


def test_the_web_form_refuses_credentials_in_the_url(login, web):
    client = login(web["owner"])
    for url in ("https://user:pass@llm.example.org/v1", "https://token@llm.example.org/v1"):
        response = client.post(reverse("judges:list", args=["acme"]), form_data(base_url=url))
        assert response.status_code == 400
        page = response.content.decode()
        assert "must not hold a user name or password" in page
        assert "pass@" not in page and "token@" not in page  # never shown back
    assert not Judge.objects.filter(slug="web").exists()


def test_the_web_form_refuses_assays_own_host(login, web, settings, public_dns):
    public_dns["assay.example.org"] = "93.184.215.20"
    public_dns["alias.example.org"] = "93.184.215.20"
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "assay.example.org"]
    client = login(web["owner"])
    for url in ("https://assay.example.org/api/", "https://alias.example.org/v1"):
        response = client.post(reverse("judges:list", args=["acme"]), form_data(base_url=url))
        assert response.status_code == 400, url
    assert client.post(reverse("judges:list", args=["acme"]), form_data()).status_code == 302


def test_a_public_host_is_accepted(login, web):
    client = login(web["owner"])
    assert client.post(reverse("judges:list", args=["acme"]), form_data()).status_code == 302


def test_the_operator_allows_hosts_names_and_networks(settings, public_dns):
    public_dns["llm.corp.example"] = "10.1.2.3"
    policy = HostPolicy.parse(["llm.corp.example", "10.9.0.0/16"], ["assay.example.org"])
    resolve = socket.getaddrinfo
    assert url_problem("http://llm.corp.example:8000/v1", policy, resolve) is None
    assert url_problem("http://10.9.8.7/v1", policy, resolve) is None
    # Not listed, and * is not in the list: even a public host is refused.
    assert url_problem("https://llm.example.org/v1", policy, resolve) is not None
    assert url_problem("http://10.8.0.1/v1", policy, resolve) is not None
    # The metadata address is refused even inside an allowed network.
    wide = HostPolicy.parse(["169.254.0.0/16"])
    assert url_problem("http://169.254.169.254/", wide, resolve) is not None


def test_add_judge_is_the_operators_and_may_name_a_loopback_model_server(judging):
    call_command(
        "add_judge",
        "acme",
        "Local",
        "--base-url",
        judging["server"].base_url,
        "--model",
        MODEL,
        "--api-key-env",
        KEY_ENV,
    )
    judge = Judge.objects.get(slug="local")
    assert judge.configured_by_operator
    job = run(judge)
    assert job.pairs.filter(status=PairStatus.JUDGED).exists()


def test_the_worker_refuses_a_stored_web_judge_on_loopback(web):
    """A judge saved before the rule (or behind the form's back) is checked on every
    connection the worker opens: nothing reaches the server."""
    judge = web["judge"]
    Judge.objects.filter(pk=judge.pk).update(configured_by_operator=False)
    judge.refresh_from_db()
    job = run(judge)
    assert not web["server"].requests
    assert set(job.pairs.values_list("status", flat=True)) == {PairStatus.FAILED}


def test_a_name_that_resolves_to_loopback_later_reaches_nothing(web, settings, public_dns):
    """DNS rebinding: the name resolves to an allowed address when the judge is saved and
    when the connection is checked, then to loopback. The worker connects to the address it
    checked, never to what a second lookup says."""
    settings.ASSAY_JUDGE_ALLOWED_HOSTS = ["*", "192.0.2.0/24"]
    port = web["server"].httpd.server_address[1]
    answers = iter(["192.0.2.1", "192.0.2.1"])
    real = socket.getaddrinfo

    def rebinding(host, port_, *args, **kwargs):
        if host == "rebind.example.org":
            address = next(answers, "127.0.0.1")
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port_ or 0))]
        return real(host, port_, *args, **kwargs)

    socket.getaddrinfo = rebinding
    try:
        judge = web["judge"]
        update_judge(judge, base_url=f"http://rebind.example.org:{port}/v1")
        judge.refresh_from_db()
        assert not judge.configured_by_operator
        run(judge)
    finally:
        socket.getaddrinfo = real
    assert not web["server"].requests


class Redirector:
    """An allowed host that answers every request with a redirect to ``target``."""

    def __init__(self, host: str, target: str):
        self.hits = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                owner.hits += 1
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.rfile.read(int(self.headers.get("Content-Length", 0)))
                    self.send_response(307)
                    self.send_header("Location", target + "/chat/completions")
                    self.send_header("Content-Length", "0")
                    self.end_headers()

        self.httpd = ThreadingHTTPServer((host, 0), Handler)
        self.httpd.daemon_threads = True
        serving_thread(self.httpd).start()

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_a_redirect_to_loopback_is_not_followed(web, settings):
    """A real server the operator allows (127.0.0.2) redirects to the model server on
    127.0.0.1: the worker does not follow it."""
    settings.ASSAY_JUDGE_ALLOWED_HOSTS = ["127.0.0.2/32"]
    redirector = Redirector("127.0.0.2", web["server"].base_url)
    try:
        judge = web["judge"]
        update_judge(judge, base_url=redirector.base_url)
        judge.refresh_from_db()
        assert not judge.configured_by_operator
        job = run(judge)
    finally:
        redirector.close()
    assert redirector.hits >= 1
    assert not web["server"].requests
    assert set(job.pairs.values_list("status", flat=True)) == {PairStatus.FAILED}


def test_changing_the_url_from_the_web_applies_the_host_rule(web):
    with pytest.raises(JudgeError, match="Assay does not call this endpoint"):
        update_judge(web["judge"], base_url="http://127.0.0.1:9/v1")
