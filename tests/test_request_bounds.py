"""Request bodies are refused by their declared size before they are read (413, 411).

Each request carries a body stream that records any read: a refused body must not have
been touched (no temporary file, no CSRF parsing of a 2 GB form).
"""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client

from annotator.models import ImportJob

pytestmark = pytest.mark.django_db

GB2 = str(2 * 1024**3)


class UnreadBody:
    """A WSGI input stream that fails the test if anything reads it."""

    def __init__(self):
        self.reads = 0

    def read(self, *args):
        self.reads += 1
        raise AssertionError("the body was read")

    readline = read


def post(client: Client, path: str, length: str, **extra):
    body = UnreadBody()
    response = client.generic(
        "POST",
        path,
        b"x",
        content_type="multipart/form-data; boundary=xyz",
        CONTENT_LENGTH=length,
        **{"wsgi.input": body},
        **extra,
    )
    return response, body


def test_anonymous_2_gb_post_is_refused_before_the_body_is_read():
    client = Client(enforce_csrf_checks=True)
    client.get("/accounts/login/")  # the login page's CSRF cookie is all the attacker has
    response, body = post(client, "/accounts/login/", GB2)
    assert response.status_code == 413
    assert body.reads == 0
    text = response.content.decode()
    assert "2,147,483,648 bytes, over the limit of" in text
    assert "nothing was received" in text
    assert response["Connection"] == "close"


def test_anonymous_body_over_the_anonymous_limit_is_refused(settings):
    client = Client(enforce_csrf_checks=True)
    size = settings.ASSAY_ANONYMOUS_BODY_BYTES + 1
    response, body = post(client, "/accounts/login/", str(size))
    assert response.status_code == 413 and body.reads == 0
    assert "Sign in to send more than 262,144 bytes" in response.content.decode()


def test_owner_over_limit_upload_gets_the_size_message_before_the_body_is_read(
    personas, login, settings
):
    settings.ASSAY_MAX_UPLOAD_BYTES = 1000
    client = login(personas["owner"])
    size = 1000 + settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1
    response, body = post(client, "/p/acme/imports/", str(size))
    assert response.status_code == 413 and body.reads == 0
    assert f"{size:,} bytes, over the limit of {size - 1:,} bytes" in response.content.decode()
    assert not ImportJob.objects.exists()


def test_signed_in_body_within_the_limit_is_read(personas, login):
    client = login(personas["owner"])
    response = client.post("/p/acme/imports/", {"kind": "documents"})
    assert response.status_code == 400  # the form's own answer: no file was sent
    assert "This field is required" in response.content.decode()


def test_body_without_a_content_length_is_refused():
    client = Client()
    body = UnreadBody()
    response = client.generic(
        "POST",
        "/accounts/login/",
        b"",
        HTTP_TRANSFER_ENCODING="chunked",
        **{"wsgi.input": body},
    )
    assert response.status_code == 411 and body.reads == 0
    assert "Content-Length" in response.content.decode()


def test_upload_limits_come_from_the_one_upload_setting():
    from operations.limits import body_limit

    assert body_limit() == settings.ASSAY_MAX_UPLOAD_BYTES + settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    assert settings.FILE_UPLOAD_MAX_MEMORY_SIZE <= settings.DATA_UPLOAD_MAX_MEMORY_SIZE


# --- the API gets its refusal as JSON --------------------------------------------------------


def test_api_over_limit_upload_is_a_json_413(personas):
    client = Client()
    response, body = post(
        client, "/api/p/acme/runs/", GB2, HTTP_AUTHORIZATION="Bearer not-checked-yet"
    )
    assert response.status_code == 413 and body.reads == 0
    assert response["Content-Type"] == "application/json"
    assert "over the limit of" in response.json()["error"]


def test_a_junk_token_does_not_lift_the_anonymous_limit(personas, settings):
    """Only a valid token lifts the anonymous limit, decided before a byte is read."""
    from api.models import ApiToken

    size = str(settings.ASSAY_ANONYMOUS_BODY_BYTES + 1)
    for header in ("Bearer junk", "Basic anything", "Bearer "):
        for path in ("/accounts/login/", "/api/p/acme/runs/"):
            response, body = post(Client(), path, size, HTTP_AUTHORIZATION=header)
            assert response.status_code == 413 and body.reads == 0, (header, path)
    row, token = ApiToken.create_for(personas["owner"], "ci")
    reading = Client(raise_request_exception=False)  # the test's body refuses to be read
    response, body = post(reading, "/api/p/acme/runs/", size, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert body.reads > 0  # a valid token: the body is read
    row.revoke()
    response, body = post(Client(), "/api/p/acme/runs/", size, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 413 and body.reads == 0
