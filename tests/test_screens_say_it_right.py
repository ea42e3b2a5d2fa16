"""Small things screens said wrong: the member form's default role, the agreement page with
one annotator, the dashboard's level names, counts in both languages."""

from __future__ import annotations

import re

import numpy as np
import pytest
from django.urls import reverse

from annotator.evidence import Evidence
from annotator.labels import change_label
from metrics.models import Run

pytestmark = pytest.mark.django_db

ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9"}


def test_adding_a_member_defaults_to_annotator(login, personas):
    body = login(personas["owner"]).get(reverse("annotator:members", args=["acme"])).content
    add_form = body.decode().split('name="username"')[1]
    selected = re.search(r'<option value="(\w+)" selected>', add_form)
    assert selected and selected.group(1) == "annotator"


@pytest.mark.parametrize("language", ["en", "zh"])
def test_agreement_with_one_annotator_says_what_is_missing(login, personas, corpus, language):
    """Before: "0 items with exactly None labels" ("恰有 None 个标注的 0 个条目")."""
    change_label(
        query=corpus["query"],
        annotator=personas["annotator"],
        evidence=Evidence.for_chunk(corpus["chunk"]),
        grade=2,
    )
    headers = ZH if language == "zh" else {"HTTP_ACCEPT_LANGUAGE": "en"}
    url = reverse("gold:agreement", args=["acme"]) + "?level=c256"
    body = login(personas["owner"]).get(url, **headers).content.decode()
    assert "None" not in body
    basis = re.search(r'<td id="fleiss-basis">(.*?)</td>', body).group(1)
    if language == "en":
        assert basis == "Fleiss' κ needs two or more annotators"
        assert "1 item · 1 annotator" in body
        assert 'id="one-annotator"' in body
    else:
        assert basis == "Fleiss κ 需要两名或更多标注员"
        assert "1 项 · 1 名标注员" in body


def test_agreement_counts_items_with_exactly_m_labels_in_the_plural(login, personas, corpus):
    for persona in ("annotator", "annotator2"):
        change_label(
            query=corpus["query"],
            annotator=personas[persona],
            evidence=Evidence.for_chunk(corpus["chunk"]),
            grade=2,
        )
    url = reverse("gold:agreement", args=["acme"]) + "?level=c256"
    body = login(personas["owner"]).get(url).content.decode()
    assert re.search(r'<td id="fleiss-basis">1 item with exactly 2 labels</td>', body)


def test_the_dashboard_names_the_level_in_the_users_language(login, personas, corpus):
    project, query = personas["project"], corpus["query"]
    change_label(
        query=query,
        annotator=personas["annotator"],
        evidence=Evidence.for_document(corpus["document"]),
        grade=2,
    )
    run = Run(project=project, name="docs-run", level="document")
    run.set_results(np.array([query.pk]), np.array([corpus["document"].pk]), np.array([1.0]))
    run.save()
    url = reverse("metrics:dashboard", args=["acme"]) + "?level=own"
    body = login(personas["owner"]).get(url, **ZH).content.decode()
    cell = re.search(r'<td data-unit-level="documents">(.*?)</td>', body)
    assert cell and cell.group(1) == "文档"


def strip_tags(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


@pytest.mark.parametrize("language", ["en", "zh"])
def test_counts_of_one_are_said_in_the_singular(login, personas, corpus, language):
    """Before: "1 results · 1 queries" on a run, "1 queries · 1 labels" and "≥ 1 annotators"
    on a gold set, "1 nuggets on 1 of 1 queries." on the nuggets page."""
    from gold.services import ConsensusPolicy, freeze_gold_set
    from nuggets.changes import Span, create_nugget

    project, query = personas["project"], corpus["query"]
    change_label(
        query=query,
        annotator=personas["annotator"],
        evidence=Evidence.for_chunk(corpus["chunk"]),
        grade=2,
    )
    run = Run(project=project, name="one", level="chunk", chunking=corpus["chunking"])
    run.set_results(np.array([query.pk]), np.array([corpus["chunk"].pk]), np.array([1.0]))
    run.save()
    gold = freeze_gold_set(project, "g", policy=ConsensusPolicy(min_annotators=1))
    create_nugget(
        query,
        text="Wings lift",
        importance="vital",
        evidence=[Span(corpus["document"], 0, 10)],
        changed_by=personas["owner"],
    )
    client = login(personas["owner"])
    headers = ZH if language == "zh" else {"HTTP_ACCEPT_LANGUAGE": "en"}

    def text_of(url, element_id):
        body = client.get(url, **headers).content.decode()
        found = re.search(rf'<(\w+)[^>]*id="{element_id}"[^>]*>(.*?)</\1>', body, re.S)
        assert found, element_id
        return strip_tags(found.group(2))

    run_counts = text_of(reverse("metrics:run_detail", args=["acme", run.pk]), "run-counts")
    gold_url = reverse("gold:detail", args=["acme", gold.pk])
    gold_counts = text_of(gold_url, "gold-counts")
    gold_body = strip_tags(client.get(gold_url, **headers).content.decode())
    nuggets = text_of(reverse("nuggets:overview", args=["acme"]), "nugget-totals")
    if language == "en":
        assert run_counts == "1 result · 1 query"
        assert gold_counts == "1 query · 1 label"
        assert "≥ 1 annotator " in gold_body
        assert nuggets == "1 nugget · queries with nuggets: 1 of 1"
    else:
        assert run_counts == "1 个结果 · 1 个查询"
        assert gold_counts == "1 个查询 · 1 条标注"
        assert "≥ 1 位标注员" in gold_body
        assert nuggets == "1 个要点 · 有要点的查询：1 个中的 1 个"


def test_an_untitled_document_leaves_no_empty_place_in_the_adjudication_queue(
    login, personas, corpus
):
    """Before: "d1 ·  · characters 0–63" for a document without a title."""
    corpus["document"].title = ""
    corpus["document"].save()
    for persona, grade in (("annotator", 3), ("annotator2", 0)):
        change_label(
            query=corpus["query"],
            annotator=personas[persona],
            evidence=Evidence.for_chunk(corpus["chunk"]),
            grade=grade,
        )
    body = login(personas["adjudicator"]).get(reverse("gold:queue", args=["acme"])).content
    header = strip_tags(body.decode().split("data-item")[1].split("</div>")[0])
    assert "d1 · characters 0–" in header and "· ·" not in header
