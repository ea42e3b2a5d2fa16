"""The API takes answer runs as the import page does: owners upload, members list, a bad
file is refused with every line and nothing written."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from answers.models import AnswerRun
from api.models import ApiToken

pytestmark = pytest.mark.django_db


def bearer(user):
    return {"HTTP_AUTHORIZATION": f"Bearer {ApiToken.create_for(user, 'ci')[1]}"}


def post(user, content: bytes, **data):
    return Client(enforce_csrf_checks=True).post(
        reverse("answers:api_answer_runs", args=["acme"]),
        {"file": SimpleUploadedFile("answers.jsonl", content), "name": "rag-1", **data},
        **bearer(user),
    )


def test_owner_uploads_members_list_annotators_may_not_upload(personas, answer_project):
    line = {"qid": "q1", "sentences": [{"text": "Lift.", "citations": [{"chunk_id": "a#0"}]}]}
    body = json.dumps(line).encode()
    refused = post(personas["annotator"], body, chunking="sent")
    assert refused.status_code == 403
    created = post(personas["owner"], body, chunking="sent", parameters='{"model": "m"}')
    assert created.status_code == 201, created.content
    answer = created.json()
    assert (answer["name"], answer["answers"], answer["citations"]) == ("rag-1", 1, 1)
    assert answer["parameters"] == {"model": "m"} and answer["chunking"] == "sent"
    listed = Client().get(
        reverse("answers:api_answer_runs", args=["acme"]), **bearer(personas["viewer"])
    )
    assert [r["name"] for r in listed.json()["answer_runs"]] == ["rag-1"]
    outsider = Client().get(
        reverse("answers:api_answer_runs", args=["acme"]), **bearer(personas["outsider"])
    )
    assert outsider.status_code == 404


def test_a_bad_file_is_refused_with_every_line_as_data(personas, answer_project):
    body = b'{"qid": "q9", "answer": "x"}\n{"qid": "q1", "answer": 3}\n'
    response = post(personas["owner"], body)
    assert response.status_code == 400
    data = response.json()
    assert data["lines"] == [
        "line 1: no query 'q9' in this project",
        'line 2: "answer" must be text',
    ]
    assert data["problems"][0]["code"] == "line"
    assert data["problems"][0]["params"]["problem"]["code"] == "answers.unknown_query"
    assert not AnswerRun.objects.exists()
    assert post(personas["owner"], b"", name="").status_code == 400
