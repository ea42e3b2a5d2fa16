"""The candidate cards drawn in Python (annotator.templatetags.label_cards): whatever the
texts, they come back as the same texts and never as markup; messages are translated."""

from __future__ import annotations

from html.parser import HTMLParser

from django.template import Context
from django.utils import translation
from hypothesis import given
from hypothesis import strategies as st

from annotator.labelling.cards import Card
from annotator.suggestions import Suggestion
from annotator.templatetags.label_cards import place_html

TAGS = {
    "div", "article", "header", "span", "a", "kbd", "p", "form", "input", "button",
    "details", "summary", "textarea", "mark",
}  # fmt: skip
GRADES = [(0, "Not relevant"), (1, "Related"), (2, "Relevant"), (3, "Highly relevant")]


class Parsed(HTMLParser):
    """Tags, attributes and text of a card, by tag and class."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.texts: dict[str, str] = {}
        self._open: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        if tag not in ("input", "kbd"):
            self._open.append(f"{tag}.{attributes.get('class', '')}")

    def handle_endtag(self, tag):
        if self._open and self._open[-1].split(".")[0] == tag:
            self._open.pop()

    def handle_data(self, data):
        if self._open:
            self.texts[self._open[-1]] = self.texts.get(self._open[-1], "") + data

    def attribute(self, tag: str, css: str, name: str) -> str | None:
        for t, attributes in self.tags:
            if t == tag and attributes.get("class") == css:
                return attributes.get(name)
        return None


def card(**fields) -> Card:
    values = dict(
        chunk_pk=7, chunk_id="c7", document_pk=3, doc_id="d3", title="Title", start=0,
        end=4, page=None, text="text", doc_length=40,
    )  # fmt: skip
    values |= fields
    return Card(**values)


def context(**extra) -> Context:
    values = {"judge_url": "/p/acme/label/1/judge/", "doc_url": "/p/acme/label/1/document/"}
    return Context({"can_label": True, "sees_all": True, "grades": GRADES, **values, **extra})


texts = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=30)


@given(doc_id=texts, title=texts, text=texts, note=texts, reason=texts, other=texts)
def test_every_text_comes_back_as_itself_and_never_as_markup(
    doc_id, title, text, note, reason, other
):
    shown = card(
        doc_id=doc_id, title=title, text=text, end=len(text), note=note, others=[(other, 2, other)],
        suggestion=Suggestion(grade=1, reason=reason, source="llm"), folded=[other],
    )  # fmt: skip
    parsed = Parsed(str(place_html(context(draft_note=note), shown, "cand", 3)))
    assert {tag for tag, _a in parsed.tags} <= TAGS
    assert sum(tag == "article" for tag, _a in parsed.tags) == 1
    assert parsed.attribute("span", "cand-doc", "title") == doc_id
    assert parsed.attribute("span", "cand-folded", "title") == other
    assert parsed.texts["span.cand-doc"] == title
    assert parsed.texts["div.cand-text"] == text
    assert parsed.texts["textarea."] == note
    assert parsed.texts["span.suggestion-reason"] == reason
    assert parsed.texts["span.other-note"] == f"({other})"


def test_a_graded_card_says_so_and_offers_no_grade_with_its_note():
    html = str(place_html(context(csrf_token="tok"), card(grade=2, note="n"), "found", 4))
    place = '<div class="card-place" id="found-7" hx-get="/p/acme/label/1/judge/?chunk=7&amp;pos=4"'
    assert html.startswith(place)
    assert '<article class="candidate graded judged" data-chunk="7"' in html
    assert 'data-grade="2"' in html and 'aria-pressed="true"' in html
    assert html.count('name="csrfmiddlewaretoken" value="tok"') == 2  # both forms
    assert '<input type="hidden" name="grade" value="2">' in html  # the note keeps it
    assert "keep-note" not in html


def test_a_viewer_sees_no_form():
    html = str(place_html(context(can_label=False), card(note="seen"), "cand", None))
    assert "<form" not in html and '<p class="note-text">seen</p>' in html
    assert '<span class="cand-pos"></span>' in html


def test_messages_in_chinese():
    shown = card(page=7, covered_grade=3, covered_by="页 2", folded=["a", "b"])
    with translation.override("zh-hans"):
        html = str(place_html(context(), shown, "cand", 1))
    assert '<span class="cand-page">第 7 页</span>' in html
    assert '已覆盖：<span class="grade g3">3</span>，来自页 2' in html
    assert "在文档中打开 <kbd>o</kbd>" in html
