"""Integers from requests are bounded: an id or offset past the database's 64 bits is a 400
or 404, never a 500 (OverflowError in SQLite, "out of range" in PostgreSQL)."""

from __future__ import annotations

import importlib
import pkgutil

import pytest
from django import forms
from django.test import Client
from django.urls import reverse

from web.fields import MAX_WHOLE, whole

pytestmark = pytest.mark.django_db

HUGE = "9223372036854775808"  # 2**63: one past SQLite's and PostgreSQL's bigint
APPS = ("accounts", "annotator", "api", "gold", "judges", "metrics", "nuggets", "web")


def test_every_integer_field_of_every_form_is_bounded():
    for top in APPS:
        package = importlib.import_module(top)
        for info in pkgutil.walk_packages(package.__path__, f"{top}."):
            if ".migrations" not in info.name and ".management" not in info.name:
                importlib.import_module(info.name)
    # Model forms are bounded by their model fields' validators (the database's range).
    unbounded = []
    stack = [forms.Form]
    while stack:
        form = stack.pop()
        stack.extend(form.__subclasses__())
        if not form.__module__.startswith(APPS):
            continue
        for name, field in getattr(form, "base_fields", {}).items():
            whole_number = isinstance(field, forms.IntegerField) and not isinstance(
                field, forms.FloatField | forms.DecimalField
            )
            if whole_number and (field.max_value is None or field.max_value > MAX_WHOLE):
                unbounded.append(f"{form.__module__}.{form.__name__}.{name}")
    assert unbounded == []


def test_whole_reads_only_bounded_ascii_digits():
    assert whole("42") == 42 and whole("0") == 0
    assert [whole(t) for t in ("", None, "-1", "4.0", "٣", HUGE, "9" * 40)] == [None] * 7


@pytest.mark.parametrize("name", ["chunk", "document", "judgment", "chunking", "pos"])
def test_the_judging_screen_answers_huge_ids_without_a_500(login, personas, corpus, name):
    client = login(personas["annotator"])
    url = reverse("annotator:label_query_judge", args=["acme", corpus["query"].pk])
    answer = client.get(url, {name: HUGE}, HTTP_HX_REQUEST="true")
    assert answer.status_code in (400, 404)
    posted = client.post(url, {"action": "grade", "grade": "2", name: HUGE})
    assert posted.status_code in (400, 404)


def test_document_view_and_search_answer_huge_numbers_without_a_500(login, personas, corpus):
    client = login(personas["annotator"])
    query = corpus["query"].pk
    for view, params in (
        ("label_query_document", {"document": HUGE}),
        ("label_query_document", {"document": corpus["document"].pk, "at": HUGE}),
        ("label_query_document", {"document": corpus["document"].pk, "page": HUGE}),
        ("label_query_search", {"q": "wing", "chunking": HUGE}),
    ):
        answer = client.get(reverse(f"annotator:{view}", args=["acme", query]), params)
        assert answer.status_code in (200, 400, 404), (view, params)


def test_members_and_tokens_answer_huge_ids_without_a_500(login, personas):
    client = login(personas["owner"])
    members = client.post(
        reverse("annotator:members", args=["acme"]), {"action": "remove", "membership": HUGE}
    )
    assert members.status_code in (400, 404)
    tokens = client.post(reverse("api:tokens"), {"action": "revoke", "token": HUGE})
    assert tokens.status_code == 404
    assert Client().get("/").status_code in (200, 302)
