"""Passage, page and document evidence: exact character offsets in any script."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.urls import reverse

from annotator.evidence import Evidence
from annotator.labelling.segments import Mark, render_segments, view_spans
from annotator.labels import change_label
from annotator.models import Document, Judgment, JudgmentHistory, Query

pytestmark = pytest.mark.django_db

# Chinese, an astral CJK Extension B character (two UTF-16 units, one code point),
# markup, an entity, a CR LF line end and a tab.
PAGE1 = "第一页：飞机的机翼。𠀋字在这里。\r\n<b>粗体</b> &amp; 符号\t结束。\n"
PAGE2 = "第二页：升力来自压力差。𠀋𠀌 Lift & <drag>.\n"
TEXT = PAGE1 + PAGE2


@pytest.fixture
def zh(personas):
    project = personas["project"]
    document = Document.objects.create(
        project=project, doc_id="zh", title="中文 <文档>", text=TEXT, page_starts=[0, len(PAGE1)]
    )
    query = Query.objects.create(project=project, qid="zq", text="升力从哪里来？")
    return {"document": document, "query": query}


def judge(client, zh, **data):
    url = reverse("annotator:label_query_judge", args=["acme", zh["query"].pk])
    data.setdefault("document", zh["document"].pk)
    return client.post(url, data, HTTP_HX_REQUEST="true")


def doc_url(zh, **params):
    base = reverse("annotator:label_query_document", args=["acme", zh["query"].pk])
    query = "&".join(f"{k}={v}" for k, v in {"document": zh["document"].pk, **params}.items())
    return f"{base}?{query}"


class Segments(HTMLParser):
    """(data-start, text) of every span in the page text container."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.inside = False
        self.segments: list[list] = []
        self.open: list[bool] = []  # open spans: is each the focus box?

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id") == "doc-page-text":
            self.inside = True
            self.page = (int(attrs["data-start"]), int(attrs["data-end"]))
        elif self.inside and tag == "span" and "focus" in (attrs.get("class") or "").split():
            self.open.append(True)  # the focused chunk's one box: its spans are "focus"
        elif self.inside and tag == "span":
            self.open.append(False)
            focus = " focus" if any(self.open) else ""
            self.segments.append([int(attrs["data-start"]), "", attrs.get("class", "") + focus])

    def handle_endtag(self, tag):
        if tag == "div" and self.inside:
            self.inside = False
        elif tag == "span" and self.inside and self.open:
            self.open.pop()

    def handle_data(self, data):
        if self.inside and self.segments:
            self.segments[-1][1] += data


def segments_of(html: str) -> Segments:
    parser = Segments()
    parser.feed(html)
    return parser


def test_every_segment_carries_its_exact_offset(login, personas, zh):
    passage = PAGE1.index("𠀋字")
    change_label(
        query=zh["query"],
        annotator=personas["annotator"],
        evidence=Evidence.for_passage(zh["document"], passage, passage + 5),
        grade=2,
    )
    client = login(personas["annotator"])
    for page, (start, end) in enumerate([(0, len(PAGE1)), (len(PAGE1), len(TEXT))], 1):
        html = client.get(doc_url(zh, page=page)).content.decode()
        parsed = segments_of(html)
        assert parsed.page == (start, end)
        assert "".join(text for _, text, _ in parsed.segments) == TEXT[start:end]
        for offset, text, _ in parsed.segments:
            assert TEXT[offset : offset + len(text)] == text
    html = client.get(doc_url(zh, page=1)).content.decode()
    highlighted = [(o, t) for o, t, cls in segments_of(html).segments if "hl g2" in cls]
    assert highlighted == [(passage, TEXT[passage : passage + 5])]
    assert "&#13;" in html  # a CR survives the HTML parser


def test_render_segments_escapes_and_marks():
    html = str(render_segments("a<b>&c", 0, 6, [Mark(1, 4, 3, 9)], focus=(3, 6)))
    assert html == (
        '<span class="seg" data-start="0">a</span>'
        '<span class="seg hl g3" data-start="1" data-judgments="9">&lt;b</span>'
        '<span class="focus focus-run" data-start="3">'
        '<span class="seg hl g3" data-start="3" data-judgments="9">&gt;</span>'
        '<span class="seg" data-start="4">&amp;c</span>'
        "</span>"
    )
    # A focus outside the part shown draws nothing (and leaves no box open).
    assert "focus" not in str(render_segments("abcdef", 0, 3, [], focus=(4, 6)))


def test_a_segment_under_several_labels_shows_the_best_grade_and_every_label():
    html = str(render_segments("abcdef", 0, 6, [Mark(0, 6, 3, 7), Mark(2, 4, 2, 8)]))
    assert html == (
        '<span class="seg hl g3" data-start="0" data-judgments="7">ab</span>'
        '<span class="seg hl g3" data-start="2" data-judgments="7 8">cd</span>'
        '<span class="seg hl g3" data-start="4" data-judgments="7">ef</span>'
    )


def test_view_spans():
    assert view_spans("abc", [0, 1]) == [(0, 1), (1, 3)]
    assert view_spans("", []) == [(0, 0)]
    long = ("x" * 99 + "\n") * 120  # 12,000 characters, no pages
    spans = view_spans(long, [])
    assert spans[0][0] == 0 and spans[-1][1] == len(long)
    assert all(a < b for a, b in spans) and all(long[b - 1] == "\n" for _, b in spans)
    assert all(spans[i][1] == spans[i + 1][0] for i in range(len(spans) - 1))


def test_grade_a_chinese_passage_with_exact_offsets(login, personas, zh):
    client = login(personas["annotator"])
    start = TEXT.index("升力来自")
    end = TEXT.index("Lift") + 4
    response = judge(
        client,
        zh,
        granularity="passage",
        start=start,
        end=end,
        text=TEXT[start:end],
        grade=3,
    )
    assert response.status_code == 200, response.content
    judgment = Judgment.objects.get()
    assert (judgment.granularity, judgment.start, judgment.end) == ("passage", start, end)
    assert TEXT[judgment.start : judgment.end] == "升力来自压力差。𠀋𠀌 Lift"
    assert "Saved" in response.content.decode()
    assert response["HX-Trigger"]  # the document view hears it and fetches itself again:
    body = client.get(doc_url(zh, page=2), HTTP_HX_REQUEST="true").content.decode()
    assert body.startswith('<div class="doc-toolbar"')  # the document view partial
    assert 'class="seg hl g3"' in body
    parsed = segments_of(body)
    marked = "".join(t for _, t, cls in parsed.segments if "hl g3" in cls)
    assert marked == TEXT[start:end]


def test_passage_with_markup_newlines_and_entities(login, personas, zh):
    client = login(personas["annotator"])
    start = PAGE1.index("\r\n<b>")
    end = PAGE1.index("\t结束")
    expected = "\r\n<b>粗体</b> &amp; 符号"
    assert TEXT[start:end] == expected
    response = judge(
        client, zh, granularity="passage", start=start, end=end, text=expected, grade=1
    )
    assert response.status_code == 200
    assert TEXT[Judgment.objects.get().start : Judgment.objects.get().end] == expected


def test_a_selection_that_does_not_match_is_refused(login, personas, zh):
    client = login(personas["annotator"])
    start = TEXT.index("升力")
    # Offsets counted in UTF-16 units (one too many after the astral character) are caught.
    response = judge(
        client, zh, granularity="passage", start=start, end=start + 2, text="升", grade=3
    )
    assert response.status_code == 409
    assert "does not match" in response.content.decode()
    assert not Judgment.objects.exists()


@pytest.mark.parametrize("span", [(5, 5), (10, 4), (0, len(TEXT) + 1), (len(TEXT), len(TEXT) + 2)])
def test_passages_outside_the_text_are_400(login, personas, zh, span):
    client = login(personas["annotator"])
    response = judge(client, zh, granularity="passage", start=span[0], end=span[1], grade=1)
    assert response.status_code == 400
    assert not Judgment.objects.exists()


def test_grade_a_page_and_the_whole_document(login, personas, zh):
    client = login(personas["annotator"])
    assert judge(client, zh, granularity="page", page=2, grade=2).status_code == 200
    assert judge(client, zh, granularity="page", page=3, grade=2).status_code == 400
    assert judge(client, zh, granularity="page", grade=2).status_code == 400
    assert judge(client, zh, granularity="document", grade=1).status_code == 200
    spans = sorted(Judgment.objects.values_list("granularity", "start", "end", "grade"))
    assert spans == [("document", 0, len(TEXT), 1), ("page", len(PAGE1), len(TEXT), 2)]
    html = client.get(doc_url(zh, page=2)).content.decode()
    assert 'class="grade-btn g2 is-set"' in html  # the page's grade
    assert 'class="grade-btn g1 is-set"' in html  # the document's grade


def test_pages_cannot_be_graded_on_a_document_without_pages(login, personas, zh):
    zh["document"].page_starts = []
    zh["document"].save()
    client = login(personas["annotator"])
    assert judge(client, zh, granularity="page", page=1, grade=2).status_code == 400
    html = client.get(doc_url(zh)).content.decode()
    assert 'name="granularity" value="page"' not in html
    # Pages only where the document has them: no "Page 1 of 1", no pager for one part.
    assert "Page 1" not in html and "doc-pager" not in html
    # Nor "第 1 页" in Chinese.
    html = client.get(doc_url(zh), HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()
    assert 'lang="zh-hans"' in html
    assert "页" not in html.split('id="doc-page-text"')[0].split('id="doc-view"')[1]


def test_a_long_document_without_pages_is_read_in_parts_not_pages(login, personas, zh):
    from annotator.labelling.segments import WINDOW_CHARS

    document = zh["document"]
    document.text = ("机翼的升力来自压力差。\n" * (WINDOW_CHARS // 6))[: WINDOW_CHARS * 2]
    document.page_starts = []
    document.save()
    client = login(personas["annotator"])
    assert judge(client, zh, granularity="passage", start=0, end=4, grade=2).status_code == 200
    html = client.get(doc_url(zh)).content.decode()
    assert "Part 1 of 3" in html and "Page" not in html
    zh_html = client.get(doc_url(zh), HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()
    assert "页" not in zh_html.split('id="doc-view"')[1]


def test_existing_evidence_can_be_changed_and_removed_from_the_document(login, personas, zh):
    client = login(personas["annotator"])
    judge(client, zh, granularity="passage", start=0, end=3, text=TEXT[:3], grade=1)
    judgment = Judgment.objects.get()
    html = client.get(doc_url(zh)).content.decode()
    assert f'id="docev-{judgment.pk}"' in html
    assert judge(client, zh, judgment=judgment.pk, grade=0).status_code == 200
    assert 'class="seg hl g0"' in client.get(doc_url(zh, page=1)).content.decode()
    assert judge(client, zh, action="delete", judgment=judgment.pk).status_code == 200
    assert "hl g" not in client.get(doc_url(zh, page=1)).content.decode()
    assert not Judgment.objects.exists()
    assert JudgmentHistory.objects.count() == 3


def test_document_view_full_page_partial_and_paging(login, personas, zh):
    client = login(personas["annotator"])
    full = client.get(doc_url(zh)).content.decode()
    assert "<html" in full and 'id="passage-form"' in full and "Page 1 of 2" in full
    assert "中文 &lt;文档&gt;" in full and "<文档>" not in full
    assert "&lt;b&gt;粗体&lt;/b&gt; &amp;amp; 符号" in full
    partial = client.get(doc_url(zh, page=2), HTTP_HX_REQUEST="true").content.decode()
    assert partial.startswith('<div class="doc-toolbar"') and "Page 2 of 2" in partial
    assert "&lt;drag&gt;" in partial and "<drag>" not in partial
    # "o" from a candidate: the page holding the offset, the chunk outlined.
    at = TEXT.index("升力")
    focused = client.get(doc_url(zh, at=at, end=at + 2)).content.decode()
    assert "Page 2 of 2" in focused
    assert [t for _, t, cls in segments_of(focused).segments if "focus" in cls] == ["升力"]
    assert client.get(doc_url(zh, page="x")).status_code == 400
    assert client.get(doc_url(zh, page=99)).status_code == 200  # clamped to the last page
    other = reverse("annotator:label_query_document", args=["acme", zh["query"].pk])
    assert client.get(f"{other}?document=999999").status_code == 404


def test_viewer_reads_the_document_without_grade_controls(login, personas, zh):
    html = login(personas["viewer"]).get(doc_url(zh)).content.decode()
    assert 'id="passage-form"' not in html and 'name="grade"' not in html
    assert "第一页" in html


def test_document_of_another_project_is_404(login, personas, zh):
    other = Document.objects.create(project=personas["other"], doc_id="x", text="秘密文本")
    client = login(personas["annotator"])
    base = reverse("annotator:label_query_document", args=["acme", zh["query"].pk])
    assert client.get(f"{base}?document={other.pk}").status_code == 404
    response = judge(client, {**zh, "document": other}, granularity="document", grade=1)
    assert response.status_code == 404


def test_leads_see_other_annotators_evidence_in_the_document(login, personas, zh):
    change_label(
        query=zh["query"],
        annotator=personas["annotator"],
        evidence=Evidence.for_passage(zh["document"], 0, 3),
        grade=3,
        note="anna's passage",
    )
    assert "anna&#x27;s passage" in login(personas["owner"]).get(doc_url(zh)).content.decode()
    assert (
        "anna&#x27;s passage" not in login(personas["annotator2"]).get(doc_url(zh)).content.decode()
    )
