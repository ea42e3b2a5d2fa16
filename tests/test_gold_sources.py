"""Frozen gold sets record their label sources, each judge pinned to the version it stood
for, and say so on the gold page, in every export and in the API."""

from __future__ import annotations

import io
import json

import openpyxl
import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotator.evidence import Evidence
from annotator.labels import change_label
from api.models import ApiToken
from gold.export import FORMATS
from gold.models import GoldSet
from judges.services import create_judge, update_judge

pytestmark = pytest.mark.django_db


@pytest.fixture
def mixed_gold(personas, corpus):
    project = personas["project"]
    judge = create_judge(
        project,
        slug="j",
        name="J",
        base_url="http://127.0.0.1:1/v1",
        model="m",
        api_key_env="ASSAY_JUDGE_KEY_J",
        by_operator=True,
    )
    for annotator, grade in ((personas["annotator"], 3), (judge.current.annotator, 1)):
        change_label(
            query=corpus["query"],
            annotator=annotator,
            evidence=Evidence.for_chunk(corpus["chunk"]),
            grade=grade,
        )
    out = io.StringIO()
    sources = ["--sources", "people,judge:j"]
    call_command("freeze_gold", "acme", "--name", "mixed", *sources, stdout=out)
    # A later version of the judge does not change what the frozen set stands on.
    update_judge(judge, prompt=judge.prompt + "\nBe strict.")
    return GoldSet.objects.get(project=project, name="mixed")


EXPECTED = ["people", "judge:j@1"]


def test_the_policy_pins_each_judge_to_its_version(mixed_gold):
    assert mixed_gold.policy["sources"] == EXPECTED
    assert mixed_gold.policy["annotators"] == ["anna", "judge-acme-j-v1"]
    assert mixed_gold.policy["humans_only"] is False


def test_the_gold_page_every_export_and_the_api_say_the_sources(mixed_gold, personas, login):
    client = login(personas["owner"])
    page = client.get(reverse("gold:detail", args=["acme", mixed_gold.pk])).content.decode()
    assert 'data-sources="people,judge:j@1"' in page and "judge j v1" in page
    listing = client.get(reverse("gold:list", args=["acme"])).content.decode()
    assert 'data-sources="people,judge:j@1"' in listing
    url = reverse("gold:export", args=["acme", mixed_gold.pk])
    for fmt in FORMATS:
        response = client.get(url, {"format": fmt, "level": "documents"})
        assert response.status_code == 200, fmt
        assert json.loads(response["Assay-Policy"])["sources"] == EXPECTED, fmt
        if fmt == "jsonl":
            lines = [json.loads(line) for line in response.content.decode().splitlines()]
            assert lines and all(line["policy"]["sources"] == EXPECTED for line in lines)
        if fmt == "xlsx":
            book = openpyxl.load_workbook(io.BytesIO(response.content))
            about = {row[0]: row[1] for row in book["about"].iter_rows(values_only=True)}
            assert about["sources"] == "people, judge:j@1"
            assert json.loads(about["policy"])["sources"] == EXPECTED
    token = ApiToken.create_for(personas["owner"], "ci")[1]
    api = Client()
    answer = api.get(
        reverse("api:gold_list", args=["acme"]), HTTP_AUTHORIZATION=f"Bearer {token}"
    ).json()
    assert answer["gold_sets"][0]["sources"] == EXPECTED
    exported = api.get(
        reverse("api:gold_export", args=["acme", mixed_gold.pk]),
        {"format": "qrels", "level": "documents"},
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert json.loads(exported["Assay-Policy"])["sources"] == EXPECTED
    out = io.StringIO()
    call_command("export_gold", "acme", "mixed", "--level", "documents", stdout=out)
    assert all(
        json.loads(line)["policy"]["sources"] == EXPECTED for line in out.getvalue().splitlines()
    )


def test_the_disagreements_download_says_whose_labels_it_compares(mixed_gold, personas, login):
    client = login(personas["owner"])
    url = reverse("gold:disagreements_download", args=["acme"])
    default = client.get(url, {"level": "documents"})
    assert json.loads(default["Assay-Policy"])["sources"] == ["people"]
    chosen = client.get(url, {"level": "documents", "sources": "people,judge:j@1"})
    policy = json.loads(chosen["Assay-Policy"])
    assert policy["sources"] == ["people", "judge:j@1"] and policy["level"] == "documents"
    lines = [json.loads(line) for line in chosen.content.decode().splitlines()]
    assert [sorted(line["grades"]) for line in lines] == [["anna", "judge-acme-j-v1"]]
    unknown = client.get(url, {"level": "documents", "sources": "judge:nobody"})
    assert unknown.status_code == 400 and b"no judge nobody" in unknown.content
