"""The README's two production setups, run as written: check --deploy, gunicorn, worker.

The commands are read from the README's code blocks (so the text cannot drift from what
works), with three changes: a generated secret key, SQLite in a temporary data directory
instead of the ``postgres://...`` placeholder, and a free port.
"""

from __future__ import annotations

import http.client
import os
import re
import secrets
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PASSWORD = "a-long-production-password"


def documented(heading: str) -> tuple[dict[str, str], list[str]]:
    """The exported variables and the commands of the code block after ``heading``."""
    readme = (ROOT / "README.md").read_text()
    block = readme[readme.index(heading) :]
    block = block[block.index("```sh\n") + 6 :]
    block = block[: block.index("```")].replace("\\\n", " ")
    lines = [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]
    exports = {}
    for word in shlex.split(lines[0].removeprefix("export ")):
        name, _, value = word.partition("=")
        exports[name] = value
    return exports, lines[1:]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Deployment:
    def __init__(self, heading: str, data_dir: Path) -> None:
        exports, self.commands = documented(heading)
        assert exports.pop("SECRET_KEY") == "..."
        exports.pop("DATABASE_URL", None)
        self.host = exports["ALLOWED_HOSTS"]
        # A clean environment: no database URL, and nothing the test run set for itself
        # (the browser tests allow async-unsafe calls, which a deployment must not).
        dropped = {"DATABASE_URL", "DJANGO_ALLOW_ASYNC_UNSAFE", "DJANGO_SETTINGS_MODULE"}
        self.env = {k: v for k, v in os.environ.items() if k not in dropped}
        self.env.update(exports, SECRET_KEY=secrets.token_urlsafe(50), ASSAY_DATA_DIR=str(data_dir))
        self.env["DJANGO_SUPERUSER_PASSWORD"] = PASSWORD
        self.port = free_port()
        self.processes: list[subprocess.Popen] = []

    def command(self, starts: str) -> str:
        line = next(line for line in self.commands if line.startswith(starts))
        line = line.rstrip("&").strip().replace(".venv/bin/", f"{BIN}/")
        return re.sub(r"--bind \S+", f"--bind 127.0.0.1:{self.port}", line)

    def run(self, starts: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["bash", "-c", self.command(starts)],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=600,
        )

    def start(self, starts: str) -> subprocess.Popen:
        process = subprocess.Popen(
            shlex.split(self.command(starts)),
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.processes.append(process)
        return process

    def serve(self) -> None:
        """Check, migrate, collect static files, start gunicorn and the worker."""
        check = self.run(".venv/bin/python manage.py check --deploy")
        assert check.returncode == 0, check.stderr
        assert "System check identified no issues" in check.stdout, check.stdout + check.stderr
        prepared = self.run(".venv/bin/python manage.py migrate")
        assert prepared.returncode == 0, prepared.stderr
        user = subprocess.run(
            [f"{BIN}/python", "manage.py", "createsuperuser", "--noinput", "--username", "op"],
            cwd=ROOT,
            env={**self.env, "DJANGO_SUPERUSER_EMAIL": "op@example.org"},
            capture_output=True,
            text=True,
        )
        assert user.returncode == 0 or "already taken" in user.stderr, user.stderr
        self.start(".venv/bin/gunicorn")
        self.worker = self.start(".venv/bin/python manage.py db_worker")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.5)
        raise AssertionError("gunicorn did not start")

    def stop(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()

    def request(self, method: str, path: str, *, headers=None, body=None):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        connection.request(method, path, body=body, headers={"Host": self.host, **(headers or {})})
        response = connection.getresponse()
        response.body = response.read()
        connection.close()
        return response


def cookie(response, name: str) -> str:
    for header in response.headers.get_all("Set-Cookie") or []:
        if header.startswith(f"{name}="):
            return header
    raise AssertionError(f"no {name} cookie")


def log_in(deployment: Deployment, scheme: str, headers: dict[str, str]):
    page = deployment.request("GET", "/accounts/login/", headers=headers)
    assert page.status == 200
    token = cookie(page, "csrftoken").split(";")[0].split("=", 1)[1]
    form = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page.body).group(1)
    origin = f"{scheme}://{deployment.host}"
    return deployment.request(
        "POST",
        "/accounts/login/",
        headers={
            **headers,
            "Cookie": f"csrftoken={token}",
            "Origin": origin,
            "Referer": f"{origin}/accounts/login/",
            "Content-Type": "application/x-www-form-urlencoded",
        },
        body=urlencode(
            {"csrfmiddlewaretoken": form.decode(), "username": "op", "password": PASSWORD}
        ),
    )


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory, django_db_setup, django_db_blocker):
    """The deployments' data directory, shared by the module (the second deployment's
    ``migrate`` and ``collectstatic`` find their work done). When the suite runs on SQLite,
    its database starts as a copy of this worker's test database, which the same migrations
    built, empty: ``migrate`` then has nothing to apply, where a new file takes it a good
    while. On PostgreSQL (CI) the deployment's SQLite file is new and ``migrate`` builds it.
    (The tests using it are marked ``django_db`` so that the test database exists.)"""
    from django.db import connection

    from tests.demo_database import copy_database

    folder = tmp_path_factory.mktemp("production")
    with django_db_blocker.unblock():
        source = connection.settings_dict["NAME"]
        if connection.vendor == "sqlite" and Path(source).exists():  # not an in-memory one
            Path(copy_database(source, tmp_path_factory.mktemp("copy"))).rename(
                folder / "assay.sqlite3"
            )
    return folder


@pytest.mark.django_db
def test_plain_http_on_a_trusted_network(data_dir):
    deployment = Deployment("**Plain http on a trusted network**", data_dir)
    try:
        deployment.serve()
        page = deployment.request("GET", "/accounts/login/")
        assert page.status == 200  # not a redirect to https on the same port
        assert page.getheader("Server").startswith("gunicorn")
        assert page.getheader("Content-Security-Policy").startswith("default-src 'self'")
        assert page.getheader("Strict-Transport-Security") is None
        assert "Secure" not in cookie(page, "csrftoken")
        assert deployment.request("GET", "/static/assay/assay.css").status == 200
        missing = deployment.request("GET", "/no-such-page/")
        assert missing.status == 404 and b"Traceback" not in missing.body  # DEBUG is off
        answer = log_in(deployment, "http", {})
        assert answer.status == 302 and answer.getheader("Location") == "/"
        assert deployment.worker.poll() is None  # the worker runs
    finally:
        deployment.stop()


@pytest.mark.django_db
def test_behind_a_tls_proxy(data_dir):
    deployment = Deployment("**Behind a TLS proxy**", data_dir)
    try:
        deployment.serve()
        plain = deployment.request("GET", "/accounts/login/")
        assert plain.status == 301
        assert plain.getheader("Location") == f"https://{deployment.host}/accounts/login/"
        proxied = {"X-Forwarded-Proto": "https"}
        page = deployment.request("GET", "/accounts/login/", headers=proxied)
        assert page.status == 200
        assert page.getheader("Strict-Transport-Security").startswith("max-age=31536000")
        assert page.getheader("Content-Security-Policy").startswith("default-src 'self'")
        assert "Secure" in cookie(page, "csrftoken")
        assert deployment.request("GET", "/static/assay/assay.css", headers=proxied).status == 200
        answer = log_in(deployment, "https", proxied)
        assert answer.status == 302 and answer.getheader("Location") == "/"
        assert "Secure" in cookie(answer, "sessionid")
        assert deployment.worker.poll() is None
    finally:
        deployment.stop()


def proxy_header(**env: str) -> str:
    code = "from django.conf import settings; "  # the settings module alone: no apps to load
    code += "print(settings.SECURE_PROXY_SSL_HEADER)"
    base = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_PROXY")}
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**base, "DJANGO_SETTINGS_MODULE": "config.settings", "SECRET_KEY": "k" * 50, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip()


def test_the_proxy_header_is_trusted_only_when_named():
    for debug in ("0", "1"):
        assert proxy_header(ASSAY_DEBUG=debug) == "None"
    named = proxy_header(ASSAY_DEBUG="0", ASSAY_PROXY_SSL_HEADER="X-Forwarded-Proto")
    assert named == "('HTTP_X_FORWARDED_PROTO', 'https')"
