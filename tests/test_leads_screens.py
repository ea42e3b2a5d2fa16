"""Leads' screens: settings form, import form by kind, failed imports, gold set danger zone,
adjudication links, the agreement confusion matrix."""

from __future__ import annotations

import re

import pytest
from django.contrib.staticfiles import finders
from django.urls import reverse

from annotator.evidence import Evidence
from annotator.forms import ImportForm, ProjectSettingsForm
from annotator.importing import kinds, run_import
from annotator.labels import change_label
from annotator.models import Document, ImportJob, ImportStatus, Query
from formats.errors import Problem

pytestmark = pytest.mark.django_db

ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9"}


# ------------------------------------------------------------------ settings


def test_every_settings_field_is_in_one_group():
    grouped = [name for _legend, names in ProjectSettingsForm.GROUPS for name in names]
    assert sorted(grouped) == sorted(ProjectSettingsForm().fields)
    assert len(grouped) == len(set(grouped))


def test_settings_page_is_grouped_labelled_and_translated(login, personas):
    client = login(personas["owner"])
    url = reverse("annotator:project_settings", args=["acme"])
    body = client.get(url).content.decode()
    assert body.count("<fieldset>") == len(ProjectSettingsForm.GROUPS)
    assert "<legend>Grades</legend>" in body and "Relevance threshold" in body
    assert "Lowest grade that counts as relevant for binary measures." in body
    assert "<p>" not in body[body.index('id="settings-form"') :].split("</form>")[0]  # not as_p
    zh = client.get(url, **ZH).content.decode()
    form = zh[zh.index('id="settings-form"') : zh.index("</form>", zh.index('id="settings-form"'))]
    for english in (
        "Relevance threshold",
        "Pool depth",
        "Lowest grade that counts as relevant",
        "Top-k of every run pooled",
        "Candidate overlap",
        "Post-edit mode",
        "The project",
        "Evaluation",
    ):
        assert english not in form, english
    assert "评分" in form or "等级" in form


# ------------------------------------------------------------------ import form


def test_import_form_marks_each_option_with_its_kinds(login, personas):
    body = login(personas["owner"]).get(reverse("annotator:import_upload", args=["acme"]))
    body = body.content.decode()
    assert "data-kind-switch" in body
    by_field = {}
    blocks = re.findall(
        r'<div class="field[^"]*"(?: data-kinds="([^"]*)")?>(.*?)</div>', body, re.S
    )
    for for_kinds, block in blocks:
        field = re.search(r'id="id_(\w+)"', block).group(1)
        by_field[field] = for_kinds.split()
    assert by_field["annotator"] == ["labels"] and by_field["run_name"] == ["run", "answers"]
    assert by_field["replace"] == ["files"] and by_field["keep_known"] == ["run"]
    assert "files" not in by_field["format"] and "documents" in by_field["format"]
    assert by_field["file"] == [] and by_field["kind"] == []  # for every kind
    assert "README" not in body


def test_every_kind_says_its_format_and_offers_an_example(login, personas):
    body = login(personas["owner"]).get(reverse("annotator:import_upload", args=["acme"]))
    body = body.content.decode()
    for kind in kinds():
        assert kind.help and kind.example, kind.name
        assert finders.find(kind.example), kind.example
        assert f'data-kinds="{kind.name}" data-kind-help' in body, kind.name
        assert kind.example.rsplit("/", 1)[1] in body


def test_example_files_import_cleanly(personas):
    """The examples are real files of their kind: each goes through the import path."""
    project = personas["project"]
    path = {k.name: finders.find(k.example) for k in kinds()}
    run_import("documents", project, path["documents"])
    run_import("queries", project, path["queries"])
    run_import("chunks", project, path["chunks"], options={"chunking": "example"})
    options = {"annotator": "assessors", "level": "document"}
    run_import("labels", project, path["labels"], options=options)
    run_import("run", project, path["run"], options={"name": "bm25"})
    run_import("files", project, path["files"], source_name="manual.md")
    assert run_import("nuggets", project, path["nuggets"]).created == 3
    assert Document.objects.filter(project=project).count() == 3
    assert Query.objects.filter(project=project).count() == 2


def test_options_of_other_kinds_are_left_out_of_the_job():
    form = ImportForm()
    assert {"chunking", "annotator", "run_name"} <= set(form.KIND_FIELDS)
    assert all(set(k) <= {x.name for x in kinds()} for k in form.KIND_FIELDS.values())


# ------------------------------------------------------------------ failed import


@pytest.mark.parametrize("errors", [["line 3: malformed JSON", "line 4: missing doc_id"], []])
def test_a_failed_import_shows_its_errors_not_a_progress_bar(login, personas, errors):
    job = ImportJob.objects.create(
        project=personas["project"],
        kind="documents",
        filename="docs.jsonl",
        status=ImportStatus.FAILED,
        problems=[Problem.from_json(error) for error in errors],  # stored before codes
    )
    url = reverse("annotator:import_status", args=["acme", job.pk])
    client = login(personas["owner"])
    for response in (client.get(url), client.get(url, HTTP_HX_REQUEST="true")):
        body = response.content.decode()
        assert "<progress" not in body
        assert "Nothing was imported" in body and 'id="import-errors"' in body
        for error in errors:
            assert f"<li>{error}</li>" in body
        if not errors:
            assert "stopped without saying why" in body


def test_a_running_import_shows_its_progress(login, personas):
    job = ImportJob.objects.create(
        project=personas["project"], kind="documents", filename="d.jsonl", status="running"
    )
    body = login(personas["owner"]).get(reverse("annotator:import_status", args=["acme", job.pk]))
    assert b"<progress" in body.content


# ------------------------------------------------------------------ agreement, adjudication


@pytest.fixture
def two_annotators(personas, corpus):
    project = personas["project"]
    d2 = Document.objects.create(project=project, doc_id="d2", title="", text="other text")
    queries = [Query.objects.create(project=project, qid=q, text=q) for q in ("a", "b", "c")]
    grades = {"annotator": [3, 0, 2, 1, 3, 0], "annotator2": [3, 1, 2, 0, 3, 0]}
    items = [(q, d) for q in queries for d in (corpus["document"], d2)]
    for who, row in grades.items():
        for (query, document), grade in zip(items, row, strict=True):
            change_label(
                query=query,
                annotator=personas[who],
                evidence=Evidence.for_document(document),
                grade=grade,
            )
    return queries


def test_confusion_matrix_is_shaded_with_totals(login, personas, two_annotators):
    url = reverse("gold:agreement", args=["acme"])
    body = (
        login(personas["owner"])
        .get(url, {"level": "documents", "a": "anna", "b": "arno"})
        .content.decode()
    )
    table = body[
        body.index('id="confusion-matrix"') : body.index(
            "</table>", body.index('id="confusion-matrix"')
        )
    ]
    assert "style=" not in table
    cells = re.findall(r'<td class="num (shade-\d)( diagonal)?">(\d+)</td>', table)
    assert len(cells) == 16
    # anna 0 / arno 0: two items, the largest cell, so the darkest shade; diagonal marked.
    assert ("shade-5", " diagonal", "2") in cells
    assert ("shade-0", "", "0") in cells
    totals = re.findall(r'<td class="num total">(\d+)</td>', table)
    assert totals[-1] == "6"  # the grand total
    assert len(totals) == 4 + 4 + 1  # four row totals, four column totals, the grand total


def test_kappa_has_three_decimals_everywhere_on_the_page(login, personas, two_annotators):
    body = (
        login(personas["owner"])
        .get(
            reverse("gold:agreement", args=["acme"]),
            {"level": "documents", "a": "anna", "b": "arno"},
        )
        .content.decode()
    )
    matrix = body[body.index('id="pair-matrix"') : body.index('id="confusion"')]
    shown = re.findall(r"#confusion\">(-?\d+\.\d+)</a>", matrix)
    assert shown and all(len(v.split(".")[1]) == 3 for v in shown)
    heading = body[body.index('id="confusion"') :]
    kappa = re.search(r"κ (-?\d+\.\d+)", heading).group(1)
    assert kappa in shown


def test_adjudication_excerpts_link_to_the_passage_in_the_document(login, personas, two_annotators):
    body = (
        login(personas["owner"])
        .get(reverse("gold:queue", args=["acme"]), {"level": "documents"})
        .content.decode()
    )
    links = re.findall(r'<a href="([^"]+)" class="excerpt-document-link">', body)
    assert links
    for link in links:
        link = link.replace("&amp;", "&")
        assert "/document/?" in link or "document=" in link
        assert re.search(r"document=\d+&at=\d+&end=\d+", link), link
