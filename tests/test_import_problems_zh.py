"""Import problems are data (a code and its values) and reach a Chinese page in Chinese.

Every registered code has a Chinese template; every process knows every code; no
problem is raised as English text; and real bad files of every kind, uploaded through the
import page (and the API), come back with no English problem wording on a Chinese page.
"""

from __future__ import annotations

import ast
import html
import importlib
import io
import json
import pkgutil
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import translation

from annotator.models import ImportJob, ImportStatus
from annotator.problems import shown
from formats.errors import PLURALS, TEMPLATES, Problem

ROOT = Path(__file__).resolve().parent.parent
APPS = (
    "accounts",
    "annotator",
    "api",
    "backups",
    "formats",
    "gold",
    "judges",
    "metrics",
    "numerics",
    "nuggets",
    "operations",
    "web",
)
ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9"}
_PLACEHOLDER = re.compile(r"%\((\w+)\)[sd]")


def every_code() -> dict[str, str]:
    """Every code any module of Assay registers (each module imported)."""
    for top in APPS:
        package = importlib.import_module(top)
        for info in pkgutil.walk_packages(package.__path__, f"{top}."):
            if ".migrations" not in info.name:
                importlib.import_module(info.name)
    return dict(TEMPLATES)


def test_every_problem_code_has_a_chinese_template():
    codes = every_code()
    assert len(codes) > 150
    untranslated, mismatched = [], []
    with translation.override("zh-hans"):
        for code, template in codes.items():
            if not re.search("[A-Za-z]{2}", _PLACEHOLDER.sub("", template)):
                continue  # nothing but values ("%(text)s"): nothing to translate
            if code in PLURALS:  # a counting problem: its plural entry, read for n = 2
                chinese = translation.ngettext(template, PLURALS[code], 2)
            else:
                chinese = translation.gettext(template)
            if chinese == template or not re.search("[\u4e00-\u9fff]", chinese):
                untranslated.append(code)
            elif sorted(_PLACEHOLDER.findall(chinese)) != sorted(_PLACEHOLDER.findall(template)):
                mismatched.append(code)
    assert untranslated == [] and mismatched == []


def test_every_process_knows_every_code():
    """A page may show a problem a worker stored: the apps register every code at start-up."""
    script = (
        "import django, json; django.setup(); from formats.errors import TEMPLATES; "
        "print(json.dumps(sorted(TEMPLATES)))"
    )
    started = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert json.loads(started.stdout.splitlines()[-1]) == sorted(every_code())


def _wording(node: ast.AST) -> bool:
    """A string literal, an f-string or ``"…" % values`` (English text), or a code's name."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return True
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return True
    if isinstance(node, ast.List | ast.Tuple):
        return any(_wording(item) for item in node.elts)
    # A registered code not called (``NO_LABELS`` for ``NO_LABELS()``) is no problem either.
    return isinstance(node, ast.Name) and node.id.isupper() and len(node.id) > 1


RAISED_WITH_PROBLEMS = (
    "FileRejected",
    "BadLine",
    "JudgeError",
    "AnswerError",
    "MissingKey",
    "NuggetRejected",
)


def test_no_problem_is_raised_as_english_text():
    """``FileRejected``, ``BadLine``, the judges' and nuggets' errors, ``errors.add`` and
    ``errors.append`` take problems."""
    found = []
    for top in APPS:
        for path in sorted((ROOT / top).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.Call):
                    continue
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                owner = getattr(getattr(node.func, "value", None), "id", "")
                problem_call = name in RAISED_WITH_PROBLEMS or (
                    name in ("add", "append", "add_each") and owner in ("errors", "collected")
                )
                given = node.args[1:] if name == "AnswerError" else node.args  # (kind, problem)
                if problem_call and any(_wording(arg) for arg in given):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []


# --- real bad files through the import page, in Chinese ------------------------------------


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _many_bad_lines() -> bytes:
    return b"".join(b'{"text": "no id"}\n' for _ in range(205))


# (kind, file name, content, form options, codes the problems must hold)
BAD_FILES = [
    (
        "documents",
        "docs.jsonl",
        b'{"doc_id": "a", "text": "x"}\n{not json\n{"text": "no id"}\n'
        b'{"doc_id": "a", "text": "y"}\n'
        b'{"doc_id": "b", "text": "z", "metadata": "{\\"a\\": NaN}"}\n[1]\n'
        b'{"doc_id": "c d", "text": ""}\n',
        {},
        {
            "rows.bad_json",
            "records.missing",
            "import.repeats",
            "import.not_json_because",
            "rows.not_object",
            "value.id_whitespace",
        },
    ),
    ("documents", "docs.csv", b'doc_id,text\nd1,"open\nd2,x\n', {}, {"rows.quote_open"}),
    ("documents", "docs.csv", b"doc_id,text,text\nd1,a,b\n", {}, {"rows.named_twice"}),
    ("documents", "docs.xlsx", b"PK not a workbook", {}, {"workbook.not_a_workbook"}),
    ("documents", "docs.jsonl", b'{"doc_id": "\xff"}\n', {}, {"file.not_utf8"}),
    ("documents", "docs.jsonl", _many_bad_lines(), {}, {"records.missing", "more"}),
    (
        "documents",
        "docs.jsonl",
        b'{"doc_id": "d1", "text": "again"}\n{"doc_id": "p", "pages": "x"}\n'
        b'{"doc_id": "t", "text": "a", "pages": ["b"]}\n{"doc_id": "n"}\n',
        {},
        {"import.exists", "import.pages_list", "import.text_or_pages", "import.no_text"},
    ),
    (
        "queries",
        "q.jsonl",
        b'{"qid": "q1", "text": "taken"}\n{"qid": "q2"}\n{"qid": "q3", "text": "t", "tags": 5}\n',
        {},
        {"import.exists", "import.missing_query_text", "import.tags_list"},
    ),
    ("queries", "q.jsonl", b"\n\n", {}, {"import.no_queries"}),
    (
        "chunks",
        "c.csv",
        b"chunk_id,doc_id,start,end\nx,d1,0,5\n",
        {"chunking": "c256"},
        {"import.chunking_exists"},
    ),
    (
        "chunks",
        "c.jsonl",
        b'{"chunk_id": "a", "doc_id": "nope", "start": 0, "end": 1}\n'
        b'{"chunk_id": "b", "doc_id": "d1", "start": 5, "end": 2}\n'
        b'{"chunk_id": "c", "doc_id": "d1", "start": 0, "end": 99999}\n'
        b'{"chunk_id": "d", "doc_id": "d1"}\n'
        b'{"chunk_id": "e", "doc_id": "d1", "text": "not in the document"}\n'
        b'{"chunk_id": "f", "doc_id": "d1", "start": "one", "end": 2}\n',
        {"chunking": "new"},
        {
            "import.unknown_document",
            "import.span_reversed",
            "import.span_outside",
            "import.start_end_or_text",
            "import.chunk_text_not_found",
            "records.not_whole",
        },
    ),
    (
        "labels",
        "l.qrels",
        b"q1 0 d1 2\n",
        {"annotator": "anna", "level": "document"},
        {"labels.a_person"},
    ),
    (
        "labels",
        "l.qrels",
        b"q9 0 d1 2\nq1 0 d1 7\nq1 0 nope 1\nq1 0 d1 x\nq1 0 d1\n",
        {"annotator": "llm", "level": "document"},
        {
            "labels.unknown_query",
            "labels.bad_grade",
            "labels.unknown_item",
            "records.not_whole",
            "rows.wrong_columns",
        },
    ),
    (
        "labels",
        "l.jsonl",
        b'{"qid": "q1", "doc_id": "d1", "start": 9, "end": 3, "grade": 2}\n'
        b'{"qid": "q1", "doc_id": "d1", "start": 0, "end": 99999, "grade": 2}\n'
        b'{"qid": "q1", "doc_id": "zz", "start": 0, "end": 1, "grade": 2}\n{"qid": "q1"}\n',
        {"annotator": "llm", "level": "passage"},
        {
            "labels.passage_reversed",
            "labels.passage_outside",
            "labels.unknown_document_id",
            "records.span_row",
        },
    ),
    (
        "labels",
        "l.csv",
        b"qid,doc_id,page,grade\nq1,d1,9,2\n",
        {"annotator": "llm", "level": "page"},
        {"labels.no_such_page"},
    ),
    (
        "labels",
        "l.trec",
        b"q1 Q0 d1 1 2.0 x\n",
        {"annotator": "llm", "format": "trec"},
        {"import.wrong_format"},
    ),
    (
        "run",
        "r.trec",
        b"q1 Q0 d1#0 1 2.0 x\nq9 Q0 d1#0 1 2.0 x\nq1 Q0 zz 1 2.0 x\nq1 Q0 d1#0 2 1.0 x\n"
        b"q1 Q0 d1#0 1 abc x\nq1 Q0\n",
        {"run_name": "r", "chunking": "c256"},
        {
            "run.unknown_query_id",
            "run.unknown_id",
            "records.repeated",
            "records.not_number",
            "rows.wrong_columns",
        },
    ),
    (
        "run",
        "r.trec",
        b"q1 Q0 d1 1 2.0 x\n",
        {"run_name": "r", "chunking": "c256"},
        {"run.wrong_chunking", "run.in_chunking"},
    ),
    (
        "run",
        "r.jsonl",
        b'{"qid": "q1"}\n{"qid": "q1", "retrieved": 5}\n',
        {"run_name": "r"},
        {"records.run_object", "records.retrieved_list"},
    ),
    ("run", "r.csv", b"qid,docid\nq1,d1\n", {"run_name": "r"}, {"records.score_or_rank"}),
    # The type comes from the bytes: what the file is, said by name.
    ("files", "notes.rtf", b"{\\rtf1 hello}", {}, {"document.not_a_document", "what.rtf"}),
    ("files", "broken.pdf", b"%PDF-1.4\nnot really a PDF", {}, {"file", "pdf.not_pdf"}),
    ("files", "blank.txt", b"   \n\n", {}, {"file", "document.no_text"}),
    ("files", "bad.docx", b"not a zip", {}, {"document.mismatch", "what.docx", "what.text"}),
    ("files", "bad.docx", b"PK\x03\x04 not a zip", {}, {"file", "docx.not_docx"}),
    (
        "files",
        "bundle.zip",
        _zip({"../escape.txt": b"x", "inner.zip": _zip({"a.txt": b"a"}), "ok.md": b"# ok"}),
        {},
        {"file", "zip.unsafe_path"},
    ),
    (
        "files",
        "bundle.zip",
        _zip({"inner.zip": _zip({"a.txt": b"a"})}),
        {},
        {"file", "files.zip_in_zip"},
    ),
    ("files", "latin.txt", "caf\u00e9".encode("latin-1"), {}, {"file", "document.not_utf8"}),
    ("files", "broken.zip", b"PK\x03\x04 not really a zip", {}, {"file", "zip.not_zip"}),
]


def _codes(problem: Problem) -> set[str]:
    inner = [value for value in problem.params.values() if isinstance(value, Problem)]
    return {problem.code}.union(*(_codes(value) for value in inner))


def _english_fragments() -> list[str]:
    """The fixed wording of every template (two words or more), to look for on a page."""
    fragments = set()
    for code, template in every_code().items():
        for part in _PLACEHOLDER.split(template)[::2]:
            part = part.strip(" :;,.()")
            if code != "text" and re.search(r"[A-Za-z]{2,}\W+[A-Za-z]{2,}", part):
                fragments.add(part)
    return sorted(fragments)


def _upload(client, kind, name, content, options):
    from tests.test_import_views import work_off_queue

    url = reverse("annotator:import_upload", args=["acme"])
    data = {"kind": kind, "file": SimpleUploadedFile(name, content), **options}
    response = client.post(url, data, **ZH)
    assert response.status_code == 302, response.content.decode()[:2000]
    work_off_queue()
    return ImportJob.objects.latest("pk")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("kind", "name", "content", "options", "codes"),
    BAD_FILES,
    ids=[f"{case[0]}-{case[1]}-{number}" for number, case in enumerate(BAD_FILES)],
)
def test_a_bad_file_is_refused_in_chinese_on_the_import_page(
    login, personas, corpus, kind, name, content, options, codes
):
    client = login(personas["owner"])
    job = _upload(client, kind, name, content, options)
    assert job.status == ImportStatus.FAILED and job.problems
    held = set().union(*(_codes(problem) for problem in job.problems))
    assert codes <= held, held
    page = client.get(reverse("annotator:import_status", args=["acme", job.pk]), **ZH)
    listed = page.content.decode().split('id="import-errors">')[1].split("</ul>")[0]
    items = [html.unescape(item) for item in re.findall(r"<li>(.*?)</li>", listed, re.S)]
    with translation.override("zh-hans"):
        assert items == [shown(problem) for problem in job.problems]
    assert all(re.search("[\u4e00-\u9fff]", item) for item in items), items
    english = [f for f in _english_fragments() if f in html.unescape(listed)]
    assert english == [], english
    # The command line and the logs keep saying it in English.
    assert job.errors == [str(problem) for problem in job.problems]


@pytest.mark.django_db
def test_the_api_answers_a_refused_run_with_codes_values_and_chinese_messages(personas, corpus):
    from django.test import Client

    from api.models import ApiToken

    token = ApiToken.create_for(personas["owner"], "ci")[1]
    response = Client().post(
        reverse("api:upload_run", args=["acme"]),
        {
            "file": SimpleUploadedFile("run.trec", b"q9 Q0 d1#0 1 2.0 ci\nq1 Q0 d1#0 1 x ci\n"),
            "name": "ci",
            "chunking": "c256",
        },
        HTTP_AUTHORIZATION=f"Bearer {token}",
        **ZH,
    )
    assert response.status_code == 400
    answer = response.json()
    assert answer["problems"][0] == {
        "code": "line",
        "params": {
            "line": 1,
            "problem": {"code": "run.unknown_query_id", "params": {"id": "'q9'"}},
        },
        "message": "第 1 行：未知的查询 id 'q9'",
    }
    assert answer["problems"][1]["params"]["problem"]["code"] == "records.not_number"
    assert answer["lines"] == [problem["message"] for problem in answer["problems"]]


@pytest.mark.django_db
def test_stored_free_text_and_unknown_codes_are_shown_as_they_are(login, personas):
    job = ImportJob.objects.create(
        project=personas["project"],
        kind="queries",
        filename="q.jsonl",
        status=ImportStatus.FAILED,
        problems=[
            Problem.from_json("line 3: an old message"),
            Problem("gone.code", {"n": 2}),
            Problem.from_json(
                {
                    "code": "line",
                    "params": {
                        "line": 4,
                        "problem": {"code": "import.missing_query_text", "params": {}},
                    },
                }
            ),
        ],
    )
    job.refresh_from_db()
    body = html.unescape(
        login(personas["owner"])
        .get(reverse("annotator:import_status", args=["acme", job.pk]), **ZH)
        .content.decode()
    )
    assert "line 3: an old message" in body and "gone.code" in body
    assert "第 4 行：缺少查询文本" in body


def test_backup_problems_and_the_overflow_line_are_translated_too():
    from backups.archive import MEMBER_LINE, NAMES_NO_ROW
    from formats.errors import MORE

    problem = MEMBER_LINE(member="tables/x.jsonl", line=3, problem=NAMES_NO_ROW(field="query"))
    assert str(problem) == "tables/x.jsonl line 3: query names no row"
    with translation.override("zh-hans"):
        assert shown(problem) == "tables/x.jsonl 第 3 行：query 指向的行不存在"
        assert shown(MORE(n=12)) == "……另有 12 个问题"


def test_a_counting_problem_takes_its_plural_form_in_both_languages():
    """Before: "1 lines dropped (unknown query or item ids)" under a run."""
    from annotator.problems import shown
    from metrics.run_import import DROPPED

    with translation.override("en"):
        assert shown(DROPPED(n=1)) == "1 line dropped (unknown query or item ids)"
        assert shown(DROPPED(n=3)) == "3 lines dropped (unknown query or item ids)"
    with translation.override("zh-hans"):
        assert shown(DROPPED(n=1)) == "丢弃了 1 行（未知的查询或条目 id）"
        assert (
            shown(Problem.from_json(DROPPED(n=1).as_json())) == "丢弃了 1 行（未知的查询或条目 id）"
        )
