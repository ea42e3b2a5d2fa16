"""Assay on several machines: two app servers and a worker, each with its own data folder,
sharing one PostgreSQL database and one S3-compatible object store (moto's stand-alone
server). A PDF imported through one server is shown by the other with its page images and
its original; a run imported through one is on the other's dashboard."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.db import connection

from annotator.models import ImportJob, Membership, Project, Query, Role
from bench.http_client import Browser
from tests.document_files import write_pdf

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        "connection.vendor != 'postgresql'", reason="several machines share a PostgreSQL"
    ),
]

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PASSWORD = "several-machines-1"
BUCKET = "assay-files"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(port: int, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"nothing listens on {port}")


def database_url() -> str:
    settings = connection.settings_dict
    password = f":{settings['PASSWORD']}" if settings.get("PASSWORD") else ""
    return (
        f"postgres://{settings['USER']}{password}@{settings['HOST'] or '127.0.0.1'}:"
        f"{settings['PORT'] or 5432}/{settings['NAME']}"
    )


@pytest.fixture
def object_store(tmp_path):
    """moto's S3 server on a free port, with an empty bucket."""
    import boto3

    port = free_port()
    log = (tmp_path / "moto.log").open("w")
    server = subprocess.Popen(
        [str(BIN / "moto_server"), "-H", "127.0.0.1", "-p", str(port)], stdout=log, stderr=log
    )
    try:
        wait_for(port)
        endpoint = f"http://127.0.0.1:{port}"
        client = boto3.client(
            "s3",
            endpoint_url=endpoint,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            region_name="us-east-1",
        )
        client.create_bucket(Bucket=BUCKET)
        yield endpoint, client
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture
def machines(tmp_path, object_store):
    """Two gunicorn app servers and a worker, each with its own ASSAY_DATA_DIR."""
    endpoint, _client = object_store
    started: list[subprocess.Popen] = []

    def environment(name: str) -> dict:
        folder = tmp_path / name
        folder.mkdir()
        return {
            **{k: v for k, v in os.environ.items() if not k.startswith("PYTEST")},
            "DATABASE_URL": database_url(),
            "ASSAY_DATA_DIR": str(folder),
            "ASSAY_STORAGE_URL": f"s3://{BUCKET}/assay?endpoint_url={endpoint}&region=us-east-1",
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "ASSAY_DEBUG": "1",
            "SECRET_KEY": "several-machines",
            "PYTHONPATH": str(ROOT),
        }

    ports = {}
    try:
        for name in ("a", "b"):
            ports[name] = free_port()
            command = [
                str(BIN / "gunicorn"),
                "config.wsgi",
                "--bind",
                f"127.0.0.1:{ports[name]}",
                "--workers",
                "1",
                "--threads",
                "4",
                "--no-control-socket",
            ]
            log = (tmp_path / f"{name}.log").open("w")
            started.append(
                subprocess.Popen(command, cwd=ROOT, env=environment(name), stdout=log, stderr=log)
            )
        log = (tmp_path / "worker.log").open("w")
        worker = [str(BIN / "python"), "manage.py", "db_worker", "--no-reload", "--interval", "0.5"]
        started.append(
            subprocess.Popen(worker, cwd=ROOT, env=environment("worker"), stdout=log, stderr=log)
        )
        for port in ports.values():
            wait_for(port)
        yield ports
    finally:
        for process in started:
            process.terminate()
        for process in started:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


def upload(browser: Browser, slug: str, fields: dict, file_name: str, data: bytes) -> int:
    _, page = browser.request("GET", f"/p/{slug}/imports/")
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1).decode()
    boundary = uuid.uuid4().hex
    body = b""
    for name, value in {"csrfmiddlewaretoken": token, **fields}.items():
        body += (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'
        ).encode()
    body += (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{file_name}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    body += data + f"\r\n--{boundary}--\r\n".encode()
    status, _ = browser.request(
        "POST",
        f"/p/{slug}/imports/",
        body,
        {
            "Content-Type": f"multipart/form-data; boundary={boundary}",
            "Origin": f"http://127.0.0.1:{browser.port}",
        },
    )
    return status


def stored_keys(s3) -> list[str]:
    return [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])]


def finished(kind: str, seconds: float = 120) -> ImportJob:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        job = ImportJob.objects.filter(kind=kind).order_by("-pk").first()
        if job is not None and job.status in ("done", "failed"):
            return job
        time.sleep(0.5)
    raise AssertionError(f"the {kind} import did not finish")


def test_two_app_servers_share_files_and_data(machines, object_store, tmp_path):
    from django.contrib.auth import get_user_model

    _endpoint, s3 = object_store
    from django.contrib.auth.hashers import PBKDF2PasswordHasher

    # The servers check passwords with the production hasher (the tests' own is faster).
    owner = get_user_model().objects.create(
        username="olga", password=PBKDF2PasswordHasher().encode(PASSWORD, "several0machines")
    )
    project = Project.objects.create(slug="shared", name="Shared")
    Membership.objects.create(project=project, user=owner, role=Role.OWNER)
    Query.objects.create(project=project, qid="q1", text="How is the seal replaced?")

    through_a, through_b = Browser(machines["a"]), Browser(machines["b"])
    assert through_a.log_in("olga", PASSWORD) == 302
    assert through_b.log_in("olga", PASSWORD) == 302

    # A PDF imported through server A (the worker runs the import) …
    pdf = write_pdf(tmp_path / "seal.pdf", [["Check the seal."], ["Replace the seal."]])
    assert upload(through_a, "shared", {"kind": "files"}, "seal.pdf", pdf.read_bytes()) == 302
    job = finished("files")
    assert job.status == "done", job.errors
    document = project.documents.get(doc_id="seal.pdf")
    stored = stored_keys(s3)
    assert any(key.startswith(f"assay/originals/{project.pk}/") for key in stored), stored
    # The worker removes the upload right after it marks the job done: wait for it.
    deadline = time.monotonic() + 30
    while any(key.startswith("assay/uploads/") for key in stored) and time.monotonic() < deadline:
        time.sleep(0.2)
        stored = stored_keys(s3)
    assert not any(key.startswith("assay/uploads/") for key in stored), "the upload is removed"

    # … is shown by server B: its page, a page image and the original download.
    status, page = through_b.request("GET", f"/p/shared/documents/{document.pk}/")
    assert status == 200 and b"Replace the seal." in page
    image_url = re.search(rb'src="(/p/shared/documents/\d+/pages/2\.png[^"]*)"', page).group(1)
    status, image = through_b.request("GET", image_url.decode().replace("&amp;", "&"))
    assert status == 200 and image.startswith(b"\x89PNG")
    status, original = through_b.request("GET", f"/p/shared/documents/{document.pk}/original/")
    assert status == 200 and original == pdf.read_bytes()
    # Neither app server keeps the files in its own folder.
    for name in ("a", "b"):
        assert not (tmp_path / name / "originals").exists()

    # A run imported through A is on B's dashboard.
    run = b"q1 Q0 seal.pdf 1 2.5 bm25\n"
    fields = {"kind": "run", "run_name": "bm25-shared"}
    assert upload(through_a, "shared", fields, "run.trec", run) == 302
    job = finished("run")
    assert job.status == "done", job.errors
    status, dashboard = through_b.request("GET", "/p/shared/metrics/")
    assert status == 200 and b"bm25-shared" in dashboard
