"""Every page in Simplified Chinese: no English left in the user interface, only in data.

Each page of the permission matrix's URL list (``test_project_views.PAGE_ROLES``) is
rendered in zh-Hans as a member allowed to see it. Its visible text (text nodes, titles,
placeholders, labels for screen readers) is stripped of data (document and query text,
ids, user, run and chunking names, measure names) and of a few words that are the same in
both languages ("Assay", "CSV", "κ"); any English word left is untranslated UI text.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Assignment, Chunk, Chunking, Document, Judgment, Project, Query
from metrics.models import Run
from numerics.measures.names import measure_names
from tests.test_project_views import PAGE_ROLES, project_urls, site_objects  # noqa: F401

pytestmark = pytest.mark.django_db

ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9"}

# The same in Chinese UIs: names of things, file formats, keys, the product.
ALLOWED = {
    "assay",
    "english",
    "csv",
    "tsv",
    "json",
    "jsonl",
    "xlsx",
    "pdf",
    "docx",
    "html",
    "zip",
    "gzip",
    "trec",
    "qrels",
    "beir",
    "trec_eval",
    "api",
    "url",
    "id",
    "ids",
    "llm",
    "openai",
    "bm25",
    "markdown",
    "ctrl",
    "enter",
    "esc",
    "shift",
    "tab",
    "krippendorff",
    "fleiss",
    "cohen",
    "kendall",
    "gpt",  # GPT-4o, and the author of the figure beside it (Thakur et al.)
    "thakur",
    "landis",
    "koch",
    "utf",
    "http",
    "https",
    "ok",
    "ci",
    "openapi",
    "png",
    "svg",
    "qid",
    "doc_id",
    "chunk_id",
    "docid",
    "rel",
    "θ",
    "key",
    "value",
    "kb",
    "mb",
    "gb",
    "rbo",
    "ndcg",
    "map",
    "mrr",
    "pdfium",
    "holm",
    "excel",
    "word",
    "bootstrap",
    "kappa",
    "alpha",
    "token",
    "tokens",
    "readme",
    "curl",
    "contains",  # a mapping policy's name, typed as it is
    "bonferroni",
    "ir_measures",
    "ndcg_cut",
    "ndeval",  # a program's name, like trec_eval
    "rag",  # retrieval-augmented generation: the track's and the field's name, like LLM
    "references",  # a field of TREC RAG answer files, typed as it is
    "crag",  # the CRAG benchmark's name (its answer grade)
    # Label source tokens, typed as they are in URLs, the API and commands.
    "people",
    "assessors",
    "judges",
    "judge",
    "pearson",
    "spearman",
    "yilmaz",
    "aslam",
    "robertson",
}
# Containers whose whole content is data: document, candidate and query text, notes.
DATA_CLASSES = {
    "doc-page-text",
    "cand-text",
    "ev-text",
    "query-text",
    "note-text",
    "selection-preview",
    "suggestion-reason",
    "other-note",
    "skip-reason",
    "prose",
    "lead",
    "nugget-text",
    "nugget-evidence-text",
    "nugget-selection-text",
}
SKIPPED_TAGS = {"script", "style", "code", "pre", "kbd", "samp", "textarea"}
VOID = {"br", "img", "input", "meta", "link", "hr", "source", "wbr", "col", "area", "base"}
ATTRIBUTES = ("title", "placeholder", "aria-label", "alt")
SPLIT = re.compile(r"[\s\u3000-\u303f\uff00-\uffef\u2e80-\u9fff]+")
CODE_LIKE = re.compile(r"[=/@_]|\.[a-z]{2,4}\b")
WORD = re.compile(r"[A-Za-z][A-Za-z_@]*(?:['’][a-z]+)?")


class VisibleText(HTMLParser):
    """The pieces of text a person reads on a page, outside data containers."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[bool] = []  # per open element: is its content skipped?
        self.pieces: list[str] = []

    def skipping(self) -> bool:
        return any(self.stack)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = set((attrs.get("class") or "").split())
        skip = tag in SKIPPED_TAGS or bool(classes & DATA_CLASSES)
        if not self.skipping() and not skip:
            self.pieces += [attrs[a] for a in ATTRIBUTES if attrs.get(a)]
            if tag == "input" and attrs.get("type") in ("submit", "button") and attrs.get("value"):
                self.pieces.append(attrs["value"])
        if tag not in VOID:
            self.stack.append(skip)

    def handle_endtag(self, tag):
        if tag not in VOID and self.stack:
            self.stack.pop()

    def handle_data(self, data):
        if not self.skipping() and data.strip():
            self.pieces.append(data)


def flat(value) -> list[str]:
    """Every key and value of a JSON value, as text."""
    if isinstance(value, dict):
        return [str(k) for k in value] + [v for item in value.values() for v in flat(item)]
    if isinstance(value, list):
        return [v for item in value for v in flat(item)]
    return [] if value is None else [str(value)]


def data_values() -> tuple[list[str], set[str]]:
    """Data shown on pages: whole strings to cut out, and the words of short names."""
    strings: list[str] = []
    for project in Project.objects.all():
        strings += [project.name, project.slug, project.description, project.guidelines]
    for document in Document.objects.all():
        strings += [document.doc_id, document.title, document.text]
        strings += flat(document.metadata)  # e.g. a PDF's producer, author, checksum
    for query in Query.objects.all():
        strings += [query.qid, query.text, query.reference_answer, *query.tags]
    strings += list(Chunk.objects.values_list("chunk_id", flat=True))
    for name, parameters in Chunking.objects.values_list("name", "parameters"):
        strings += [name, *flat(parameters)]
    strings += list(Judgment.objects.values_list("note", flat=True))
    strings += list(get_user_model().objects.values_list("username", flat=True))
    for run in Run.objects.all():
        strings += [run.name, run.source, run.series, *run.tags]
    from gold.models import GoldSet
    from judges.models import Judge

    strings += list(GoldSet.objects.values_list("name", flat=True))
    for judge in Judge.objects.all():
        strings += [judge.name, judge.slug, judge.model, judge.base_url, judge.api_key_env]
        strings += [judge.prompt]
    from nuggets.models import Nugget
    from numerics.nuggets import NUGGET_FAMILIES

    strings += list(Nugget.objects.values_list("text", flat=True))
    from answers.models import AnswerRun

    strings += list(AnswerRun.objects.values_list("name", flat=True))
    strings = sorted({s for s in strings if s}, key=len, reverse=True)
    short = {w.lower() for s in strings if len(s) <= 80 for w in WORD.findall(s)}
    names = [*measure_names(), *NUGGET_FAMILIES]
    return strings, short | {m.lower() for m in names}


@lru_cache(maxsize=4)
def data_pattern(strings: tuple[str, ...]) -> re.Pattern:
    """Any data value standing alone: not the "r" of a run inside an English word."""
    values = "|".join(re.escape(v) for v in strings)
    return re.compile(rf"(?<![A-Za-z0-9])(?:{values})(?![A-Za-z0-9])")


def english_words(
    html: str, strings: list[str], words: set[str], seen_in: dict | None = None
) -> list[str]:
    """English words in the page's visible text, data cut out; ``seen_in``: word → where."""
    seen_in = {} if seen_in is None else seen_in
    parser = VisibleText()
    parser.feed(html)
    found = []
    for piece in parser.pieces:
        piece = data_pattern(tuple(strings)).sub(" ", piece)
        # Syntax a person types or reads as code (P(rel=2)@k, docs/measures.md,
        # any_overlap, size=256) is the same in every language.
        piece = " ".join(t for t in SPLIT.split(piece) if not CODE_LIKE.search(t))
        for word in WORD.findall(piece):
            bare = word.lower().split("@")[0].split("'")[0].split("’")[0]
            if len(bare) >= 2 and bare not in ALLOWED and bare not in words:
                found.append(word)
                seen_in.setdefault(word, " ".join(piece.split())[:80])
    return found


@pytest.fixture
def busy_project(personas, corpus, site_objects):  # noqa: F811
    """The matrix's objects plus labels from two annotators, a note and a queue."""
    query, chunk = corpus["query"], corpus["chunk"]
    for persona, grade in (("annotator", 2), ("annotator2", 0), ("owner", 3)):
        change_label(
            query=query,
            annotator=personas[persona],
            evidence=Evidence.for_chunk(chunk),
            grade=grade,
            note="Mentions lift." if persona == "annotator" else None,
        )
        Assignment.objects.create(
            project=personas["project"], query=query, annotator=personas[persona]
        )
    from nuggets.changes import Span, create_nugget

    document = corpus["document"]
    create_nugget(
        query,
        text="Wings lift",
        importance="vital",
        evidence=[Span(document, 0, 10)],
        changed_by=personas["owner"],
    )
    # A quality dimension graded by two people: the quality sections are drawn.
    from quality.dimensions import offer_source_quality
    from quality.grades import QualitySource, change_quality

    dimension = offer_source_quality(personas["project"], unit="document")
    for persona, grade in (("annotator", 2), ("owner", 3)):
        change_quality(
            dimension=dimension,
            annotator=personas[persona],
            source=QualitySource(document=document),
            grade=grade,
        )
    return site_objects


def pages(objects, corpus) -> list[tuple[str, str]]:
    listed = [(name, url) for name, url in project_urls(objects) if PAGE_ROLES[name]]
    q = corpus["query"].pk
    extra = [
        ("project_list", reverse("annotator:project_list")),
        ("project_new", reverse("annotator:project_new")),
        ("tokens", reverse("api:tokens")),
        ("password_change", reverse("password_change")),
        (
            "document view",
            reverse("annotator:label_query_document", args=["acme", q])
            + f"?document={corpus['document'].pk}",
        ),
        ("search", reverse("annotator:label_query_search", args=["acme", q]) + "?q=wings"),
        (
            "document search",
            reverse("annotator:label_query_search", args=["acme", q]) + "?q=wings&scope=documents",
        ),
    ]
    return listed + extra


@pytest.mark.parametrize("persona", ["owner", "annotator"])
def test_every_page_in_chinese_has_no_english_ui_text(
    login, personas, corpus, busy_project, persona
):
    client = login(personas[persona])
    strings, words = data_values()
    untranslated = {}
    checked = 0
    for name, url in pages(busy_project, corpus):
        allowed = PAGE_ROLES.get(name, {"owner", "annotator"})
        if persona not in allowed:
            continue
        response = client.get(url, **ZH)
        if response.status_code != 200 or "text/html" not in response.get("Content-Type", ""):
            continue
        checked += 1
        where: dict[str, str] = {}
        found = english_words(response.content.decode(), strings, words, where)
        if found:
            untranslated[name] = {word: where[word] for word in sorted(set(found))}
    assert checked > 20 if persona == "owner" else checked > 10
    assert untranslated == {}, json.dumps(untranslated, indent=1, ensure_ascii=False)


def test_the_check_sees_english_ui_text_but_not_data():
    html = (
        '<h1 title="Your queue">队列</h1><p class="query-text">How do wings lift?</p>'
        '<button aria-label="搜索">Search</button><p>d1 · nDCG@10 · κ · CSV</p>'
        "<script>var english = 1;</script><kbd>Esc</kbd>"
    )
    found = english_words(html, ["d1"], {"ndcg"})
    assert found == ["Your", "queue", "Search"]


# --- error pages and what scripts write -------------------------------------------------

SCRIPTS = Path(__file__).resolve().parent.parent / "static" / "assay"
ISLAND = re.compile(r'<script id="assay-messages" type="application/json">(.*?)</script>', re.S)
# A string literal in a script that reads as English prose: "Not saved (", "Saved".
PROSE = re.compile(r"""(["'`])((?:[A-Z][a-z]+|[a-z]+)(?: [a-z]+)+[ .,:;!?()…]*)\1""")
MESSAGE_KEY = re.compile(r"""(?:assayMessage|message)\(\s*["'](\w+)["']""")


def test_error_pages_are_in_chinese(login, personas, corpus):
    """Before, the 404 page said "Not Found" to everybody, whatever their language."""
    from django.template.loader import render_to_string
    from django.test import Client
    from django.utils import translation

    strings, words = data_values()
    client = login(personas["annotator"])
    pages = {
        "404 path": client.get("/no-such-page/", **ZH),
        "404 project": client.get(reverse("annotator:project_detail", args=["nope"]), **ZH),
        "404 query": client.get(reverse("annotator:label_query", args=["acme", 999999]), **ZH),
        "403": client.get(reverse("annotator:members", args=["acme"]), **ZH),
        "400": Client().get("/", HTTP_HOST="not-allowed.example", **ZH),
    }
    expected = {"404 path": 404, "404 project": 404, "404 query": 404, "403": 403, "400": 400}
    found = {}
    for name, response in pages.items():
        assert response.status_code == expected[name], name
        html = response.content.decode()
        assert 'id="error-page"' in html, name
        found[name] = english_words(html, strings, words)
    with translation.override("zh-hans"):
        found["500"] = english_words(render_to_string("500.html"), strings, words)
    assert all(not words_ for words_ in found.values()), found


def island(html: str) -> dict:
    return json.loads(ISLAND.search(html).group(1))


def test_messages_scripts_write_come_from_the_catalogue_in_chinese(login, personas, corpus):
    """Scripts hold no text of their own: every key they ask for is in the page's island,
    and in Chinese no message is left in English."""
    client = login(personas["annotator"])
    html = client.get(reverse("annotator:project_list"), **ZH).content.decode()
    messages = island(html)
    english = island(client.get(reverse("annotator:project_list")).content.decode())
    assert set(messages) == set(english)
    strings, words = data_values()
    left = {}
    for key, value in messages.items():
        forms = value.values() if isinstance(value, dict) else [value]
        for text in forms:
            text = re.sub(r"%\(\w+\)[sd]", " ", text)  # placeholders the script fills
            found = english_words(f"<p>{text}</p>", strings, words)
            if found:
                left[key] = found
    assert left == {}
    used, prose = set(), {}
    for script in sorted(SCRIPTS.glob("*.js")):
        source = script.read_text(encoding="utf-8")
        code = "\n".join(line.split("//")[0] for line in source.splitlines())
        code = code.replace('"use strict"', "")
        used |= set(MESSAGE_KEY.findall(code))
        prose[script.name] = [m.group(2) for m in PROSE.finditer(code)]
    assert used and used <= set(messages), sorted(used - set(messages))
    assert {name: texts for name, texts in prose.items() if texts} == {}


def test_the_script_check_finds_english_in_a_script():
    code = 'status.textContent = "Not saved (" + code + "). Try again.";'
    assert [m.group(2) for m in PROSE.finditer(code)] == ["Not saved ("]
    assert not list(PROSE.finditer('el.closest("#labelling .candidate"); x = "save-status "'))


@pytest.mark.parametrize(
    "data,expected",
    [
        ({"grade": 2}, "这个等级是给哪条证据的"),
        ({"chunk": "__chunk__", "grade": 9}, "0"),
    ],
)
def test_plain_text_answers_scripts_show_are_in_chinese(login, personas, corpus, data, expected):
    """A refused save's reason (plain text, shown by the labelling script) is translated."""
    data = {k: (corpus["chunk"].pk if v == "__chunk__" else v) for k, v in data.items()}
    url = reverse("annotator:label_query_judge", args=["acme", corpus["query"].pk])
    response = login(personas["annotator"]).post(url, data, HTTP_HX_REQUEST="true", **ZH)
    assert response.status_code == 400
    text = response.content.decode()
    assert expected in text
    strings, words = data_values()
    assert english_words(f"<p>{text}</p>", strings, words) == []
