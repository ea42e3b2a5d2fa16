"""Import problems, worded in English where files are read, shown in the user's language."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import translation

from annotator.importing import run_import
from annotator.models import ImportJob, ImportStatus
from annotator.problems import translated
from formats import FileRejected

ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9"}


def rejected(tmp_path, kind: str, name: str, text: str, project) -> list[str]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FileRejected) as caught:
        run_import(kind, project, path)
    return caught.value.errors


@pytest.mark.django_db
def test_reader_and_importer_problems_are_translated(tmp_path, personas):
    errors = rejected(
        tmp_path,
        "documents",
        "docs.jsonl",
        '{"doc_id": "a", "text": "x"}\n{not json\n{"text": "no id"}\n',
        personas["project"],
    )
    assert (
        errors[0].startswith("line 2: malformed JSON (") and errors[1] == "line 3: missing doc_id"
    )
    with translation.override("zh-hans"):
        shown = [translated(e) for e in errors]
    assert shown[0].startswith("第 2 行：JSON 格式错误（") and "第 2 列" in shown[0]
    assert shown[1] == "第 3 行：缺少 doc_id"
    with translation.override("en"):
        assert [translated(e) for e in errors] == errors  # English stays word for word


def test_values_that_are_wording_are_translated_and_unknown_text_stays():
    with translation.override("zh-hans"):
        assert translated("… and 12 more problems") == "……另有 12 个问题"
        assert translated("line 4: unknown chunk id 'x#1'") == "第 4 行：未知的文本块 id 'x#1'"
        assert translated("something nobody worded") == "something nobody worded"
        # A document file's problem keeps the file's name, and its page.
        assert translated("scan.pdf: the PDF has no pages") == "scan.pdf：该 PDF 没有页面"
        assert translated("a.pdf, page 3: the page cannot be read (corrupt PDF)") == (
            "a.pdf，第 3 页：无法读取该页（PDF 已损坏）"
        )
        assert translated("x: y") == "x: y"  # "a: b" that is no file's problem stays


@pytest.mark.django_db
def test_a_failed_import_page_shows_problems_in_chinese(login, personas):
    job = ImportJob.objects.create(
        project=personas["project"],
        kind="queries",
        filename="q.jsonl",
        status=ImportStatus.FAILED,
        errors=["line 3: missing query text", "the file holds no queries"],
    )
    client = login(personas["owner"])
    url = reverse("annotator:import_status", args=["acme", job.pk])
    body = client.get(url, **ZH).content.decode()
    assert "第 3 行：缺少查询文本" in body and "文件中没有查询" in body
    assert "missing query text" not in body
