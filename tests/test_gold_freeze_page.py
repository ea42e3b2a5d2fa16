"""The freeze page: choose whose labels count, preview the version, freeze it; version
comparison counts units consistently."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotator.evidence import Evidence
from annotator.importing import run_import
from annotator.labels import change_label
from gold.models import GoldSet
from gold.versions import diff_gold_sets

pytestmark = pytest.mark.django_db


@pytest.fixture
def labelled(personas, corpus, tmp_path):
    query, document = corpus["query"], corpus["document"]
    change_label(
        query=query,
        annotator=personas["annotator"],
        evidence=Evidence.for_passage(document, 0, 5),
        grade=3,
    )
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 0\n")
    run_import(
        "labels", personas["project"], qrels, options={"annotator": "judge", "level": "document"}
    )
    return corpus


FORM = {"name": "v", "rule": "majority", "min_annotators": 1, "adjudicated_first": "on"}


def test_preview_shows_queries_and_units_per_level_and_writes_nothing(login, personas, labelled):
    client = login(personas["adjudicator"])
    url = reverse("gold:list", args=["acme"])
    page = client.get(url).content.decode()
    assert 'value="anna"' in page and "judge (imported)" in page  # the choice offered
    body = client.post(url, {**FORM, "preview": "1"}).content.decode()
    assert GoldSet.objects.count() == 0
    row = body[body.index('data-level="documents"') :]
    assert [cell for cell in row.split("</td>")[1:4]] == [
        '<td class="num">1',
        '<td class="num">1',
        '<td class="num">1',
    ]
    assert "anna" in body[body.index('id="freeze-preview"') :]
    # Naming the imported judge: its grade 0 joins anna's 3 on d1 (majority tie → 3).
    judged = client.post(url, {**FORM, "annotators": ["judge"], "preview": "1"}).content.decode()
    row = judged[judged.index('data-level="documents"') :]
    assert row.split("</td>")[3] == '<td class="num">0'  # judge alone: d1 not relevant


def test_freeze_from_the_page_keeps_the_choice(login, personas, labelled):
    client = login(personas["owner"])
    url = reverse("gold:list", args=["acme"])
    assert client.post(url, FORM).status_code == 302
    assert client.post(url, {**FORM, "annotators": ["anna", "judge"]}).status_code == 302
    people, both = GoldSet.objects.order_by("version")
    assert people.policy["annotators"] == ["anna"] and people.policy["humans_only"]
    assert both.policy["annotators"] == ["anna", "judge"] and not both.policy["humans_only"]
    bad = client.post(url, {**FORM, "annotators": ["zed"]})
    assert bad.status_code == 400 and GoldSet.objects.count() == 2


def test_comparison_counts_units_consistently(login, personas, labelled):
    from gold.services import ConsensusPolicy, freeze_gold_set

    project, query, document = personas["project"], labelled["query"], labelled["document"]
    v1 = freeze_gold_set(project, "g", policy=ConsensusPolicy())
    # Two more labels on a unit already judged: no unit is added, none removed.
    change_label(
        query=query,
        annotator=personas["annotator2"],
        evidence=Evidence.for_passage(document, 2, 9),
        grade=1,
    )
    change_label(
        query=query,
        annotator=personas["annotator2"],
        evidence=Evidence.for_page(document, 2),
        grade=1,
    )
    v2 = freeze_gold_set(project, "g", policy=ConsensusPolicy("min"))
    assert v2.n_labels == v1.n_labels + 2
    for level in ("documents", "pages", "c256"):
        diff = diff_gold_sets(v1, v2, level=level)
        assert diff["n_new"] - diff["n_old"] == len(diff["added"]) - len(diff["removed"])
    pages = diff_gold_sets(v1, v2, level="pages")
    assert [(r["unit"], r["grade"]) for r in pages["added"]] == [("d1#p2", 1)]
    assert [(r["unit"], r["old"], r["new"]) for r in pages["changed"]] == [("d1#p1", 3, 1)]
    client = login(personas["owner"])
    detail = reverse("gold:detail", args=["acme", v2.pk])
    body = client.get(detail, {"against": v1.pk, "level": "pages"}).content.decode()
    assert "units at pages: 1 → 2; 1 added, 0 removed, 1 regraded." in body
    assert client.get(detail, {"against": v1.pk, "level": "nope"}).status_code == 400
