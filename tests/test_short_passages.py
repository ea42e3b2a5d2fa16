"""A passage shorter than the project's setting is saved only once the annotator confirms
it: a one-character passage ("I", grade 3) was saved from a mis-drag."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotator.forms import ProjectSettingsForm
from annotator.models import Judgment

pytestmark = pytest.mark.django_db


def passage(client, corpus, start, end, language="en", **extra):
    text = corpus["document"].text
    url = reverse("annotator:label_query_judge", args=["acme", corpus["query"].pk])
    data = {
        "granularity": "passage",
        "document": corpus["document"].pk,
        "start": start,
        "end": end,
        "text": text[start:end],
        "grade": 3,
        **extra,
    }
    return client.post(url, data, HTTP_HX_REQUEST="true", HTTP_ACCEPT_LANGUAGE=language)


def test_a_passage_shorter_than_the_setting_asks_first(login, personas, corpus):
    client = login(personas["annotator"])
    assert personas["project"].short_passage == 3  # the default
    refused = passage(client, corpus, 0, 1)
    assert refused.status_code == 400
    assert "only 1 character long" in refused.content.decode()
    assert not Judgment.objects.exists()
    assert passage(client, corpus, 0, 1, short_ok=1).status_code == 200
    assert list(Judgment.objects.values_list("start", "end", "grade")) == [(0, 1, 3)]
    # Three characters are a passage like any other; so is regrading a saved short one.
    assert passage(client, corpus, 6, 9).status_code == 200
    label = Judgment.objects.get(start=0)
    url = reverse("annotator:label_query_judge", args=["acme", corpus["query"].pk])
    regrade = client.post(url, {"judgment": label.pk, "grade": 1}, HTTP_HX_REQUEST="true")
    assert regrade.status_code == 200
    assert Judgment.objects.get(pk=label.pk).grade == 1


def test_the_threshold_is_a_project_setting(login, personas, corpus):
    project = personas["project"]
    project.short_passage = 0
    project.save()
    client = login(personas["annotator"])
    assert passage(client, corpus, 0, 1).status_code == 200
    project.short_passage = 10
    project.save()
    answer = passage(client, corpus, 6, 11)
    assert answer.status_code == 400 and "only 5 characters long" in answer.content.decode()
    zh = passage(client, corpus, 6, 11, language="zh-CN")
    assert "所选内容只有 5 个字符" in zh.content.decode()


def test_the_document_view_tells_the_script_the_threshold(login, personas, corpus):
    client = login(personas["annotator"])
    url = reverse("annotator:label_query_document", args=["acme", corpus["query"].pk])
    body = client.get(url, {"document": corpus["document"].pk}).content.decode()
    assert 'id="passage-form"' in body and 'data-short="3"' in body


@pytest.mark.parametrize("value,valid", [("0", True), ("5", True), ("", True), ("1001", False)])
def test_the_settings_page_checks_the_threshold(personas, value, valid):
    project = personas["project"]
    data = {
        "name": project.name,
        "grade_label_0": "a",
        "grade_label_1": "b",
        "grade_label_2": "c",
        "grade_label_3": "d",
        "relevance_threshold": 1,
        "pool_depth": 10,
        "short_passage": value,
    }
    form = ProjectSettingsForm(data, instance=project)
    assert form.is_valid() is valid, form.errors
    if valid:
        assert form.cleaned_data["short_passage"] == (int(value) if value else 3)
