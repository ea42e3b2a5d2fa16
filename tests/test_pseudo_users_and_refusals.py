"""Pseudo users stay in their project, and refusals are logged as one line.

A project's pseudo-annotators (imported assessors) and its LLM judges' versions hold that
project's labels: another project's owner can neither import labels under their names nor
make them members. A 403 is the access rule working: the log says so in one line.
"""

from __future__ import annotations

import io
import logging

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotator.importing import run_import
from annotator.models import Judgment, Membership, Role
from formats import FileRejected
from operations.logs import RefusalsInOneLine

pytestmark = pytest.mark.django_db


@pytest.fixture
def other_projects_pseudo_users(personas):
    """otto's project "other" with an imported assessor and an LLM judge's version."""
    User = get_user_model()
    names = ("other-assessors", "judge-other-gpt-v1")
    for name in names:
        user = User(username=name)
        user.set_unusable_password()
        user.save()
        Membership.objects.create(
            project=personas["other"], user=user, role=Role.ANNOTATOR, is_pseudo=True
        )
    return names


@pytest.mark.parametrize("name", ["other-assessors", "judge-other-gpt-v1"])
def test_labels_cannot_go_under_another_projects_pseudo_user(
    tmp_path, personas, corpus, other_projects_pseudo_users, name
):
    path = tmp_path / "l.qrels"
    path.write_text("q1 0 d1 2\n")
    options = {"annotator": name, "level": "document"}
    with pytest.raises(FileRejected) as refused:
        run_import("labels", personas["project"], path, options=options)
    assert refused.value.errors == [
        f"{name!r} labels for another project (an imported assessor or an LLM judge); "
        "choose another name"
    ]
    assert not Judgment.objects.exists()
    assert not Membership.objects.filter(project=personas["project"], user__username=name).exists()
    # A name of this project's own, or a new one, is fine.
    run_import("labels", personas["project"], path, options={**options, "annotator": "acme-llm"})
    assert Judgment.objects.get().annotator.username == "acme-llm"


@pytest.mark.parametrize("name", ["other-assessors", "judge-other-gpt-v1", "acme-llm"])
def test_a_pseudo_user_is_never_made_a_member(
    login, tmp_path, personas, corpus, other_projects_pseudo_users, name
):
    if name == "acme-llm":  # this project's own pseudo-annotator
        path = tmp_path / "l.qrels"
        path.write_text("q1 0 d1 2\n")
        run_import("labels", personas["project"], path, options={"annotator": name})
    client = login(personas["owner"])
    answer = client.post(
        reverse("annotator:members", args=["acme"]),
        {"action": "add", "username": name, "role": Role.OWNER},
    )
    assert answer.status_code == 400
    assert "This name holds imported labels, not a person." in answer.content.decode()
    assert not Membership.objects.filter(
        project=personas["project"], user__username=name, is_pseudo=False
    ).exists()


def test_a_refusal_is_logged_as_one_line(login, personas):
    handler = next(
        h
        for h in logging.getLogger().handlers
        if any(isinstance(f, RefusalsInOneLine) for f in h.filters)
    )
    stream = io.StringIO()
    previous = handler.setStream(stream)
    try:
        client = login(personas["viewer"])
        answer = client.post(reverse("annotator:members", args=["acme"]), {"action": "add"})
        assert answer.status_code == 403
    finally:
        handler.setStream(previous)
    logged = stream.getvalue()
    assert "Forbidden" in logged and "Traceback" not in logged
    assert logged.strip().count("\n") == 0
