"""Each piece of text is shown once, also below the fold threshold: cards that share text
show it in the first card holding it; later cards name that card (LeCaRD Q-5180, doc
33982: cards 490–1064 and 798–1360 shared 266 characters, 47 % of the shorter)."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from hypothesis import given
from hypothesis import strategies as st

from annotator import pool
from annotator.labelling.pieces import repeated_parts
from annotator.models import Chunk, Chunking, Document
from numerics.spans import fold_overlapping

pytestmark = pytest.mark.django_db

TEXT = "".join(f"第{i}句：被告人以非法占有为目的，骗取他人财物。" for i in range(80))


def test_a_later_card_names_the_part_an_earlier_card_shows():
    spans = {1: (7, 490, 1064), 2: (7, 798, 1360), 3: (8, 0, 100)}
    assert repeated_parts([1, 2, 3], spans) == {2: [(798, 1064, 1)]}
    # In the other order the other card shows it.
    assert repeated_parts([2, 1, 3], spans) == {1: [(798, 1064, 1)]}


def test_a_part_held_by_two_earlier_cards_names_the_first():
    spans = {1: (1, 0, 50), 2: (1, 40, 100), 3: (1, 30, 120)}
    # Card 3 shares 30–50 with card 1 (and 40–50 with card 2 too) and 50–100 with card 2.
    assert repeated_parts([1, 2, 3], spans) == {
        2: [(40, 50, 1)],
        3: [(30, 50, 1), (50, 100, 2)],
    }


@given(
    st.lists(
        st.tuples(st.integers(0, 2), st.integers(0, 60), st.integers(1, 40)),
        min_size=1,
        max_size=12,
    ),
    st.sampled_from([0.5, 0.8, 1.0]),
)
def test_every_character_of_the_pool_is_shown_by_exactly_one_card(raw, threshold):
    spans_list = [(d, s, s + n) for d, s, n in raw]
    # The cards are the fold's representatives, as on the screen.
    documents, starts, ends = (list(column) for column in zip(*spans_list, strict=True))
    representative = fold_overlapping(documents, starts, ends, threshold).tolist()
    order = [i for i in range(len(spans_list)) if representative[i] == i]
    spans = {i: spans_list[i] for i in order}
    repeats = repeated_parts(order, spans)
    shown: dict[tuple[int, int], int] = {}
    for position, pk in enumerate(order, 1):
        document, start, end = spans[pk]
        named = {x for a, b, p in repeats.get(pk, []) for x in range(a, b)}
        for a, b, p in repeats.get(pk, []):
            assert p < position  # named parts are shown by an earlier card
            assert start <= a < b <= end
        for x in range(start, end):
            if x not in named:
                assert (document, x) not in shown, "a character shown twice"
                shown[(document, x)] = position
    covered = {(d, x) for d, s, e in spans.values() for x in range(s, e)}
    assert set(shown) == covered  # and none left unshown


@pytest.fixture
def shared_text(personas, corpus, monkeypatch):
    """The Q-5180 case: two windows of one document sharing 266 characters."""
    project, query = personas["project"], corpus["query"]
    document = Document.objects.create(project=project, doc_id="33982", text=TEXT)
    chunking = Chunking.objects.create(project=project, name="tokens-512-64")
    chunks = [
        Chunk.objects.create(
            chunking=chunking, chunk_id=f"33982#{i}", document=document, start=s, end=e
        )
        for i, (s, e) in enumerate([(490, 1064), (798, 1360)], 1)
    ]
    ranking = [[c.pk for c in chunks]]
    source = lambda q, chunking: ranking if q.pk == query.pk else []  # noqa: E731
    monkeypatch.setattr(pool, "ranking_source", lambda: source)
    return {"query": query, "chunks": chunks}


def test_shared_text_is_shown_once_on_the_screen(login, personas, shared_text):
    client = login(personas["annotator"])
    url = reverse("annotator:label_query", args=["acme", shared_text["query"].pk])
    body = client.get(url).content.decode()
    articles = re.findall(r'<article class="candidate.*?</article>', body, re.S)
    assert len(articles) == 2  # 47 % of the shorter: not folded into one card
    # The cards come in the annotator's own shuffled order (by ids), so either window
    # may be first: the first is shown whole, the second folds what the first showed.
    first, second = articles
    texts = [
        re.search(r'<div class="cand-text"[^>]*>(.*?)</div>', a, re.S).group(1) for a in articles
    ]
    first_start = int(re.search(r'data-start="(\d+)"', first).group(1))
    first_end = 1064 if first_start == 490 else 1360
    assert "repeat" not in texts[0] and TEXT[first_start:first_end] in texts[0]
    start = int(re.search(r'data-start="(\d+)"', second).group(1))
    assert start != first_start
    shared = TEXT[798:1064]
    assert "… 266 characters shown above in card 1" in texts[1]
    # The shared part sits folded in the later card; its own text is shown as it is.
    folded = re.search(r'<span class="repeat" data-card="1".*?</span></span>', texts[1], re.S)
    assert folded and shared in folded.group(0)
    # The card's text nodes are the document's characters: nothing else is written in.
    plain = re.sub(r"<[^>]+>", "", texts[1])
    assert plain == TEXT[start : 1360 if start == 798 else 1064]
    new = TEXT[1064:1360] if start == 798 else TEXT[490:798]
    assert new in texts[1].replace(folded.group(0), "")
    # Refreshing the card alone (after a grade) keeps it so.
    judge = reverse("annotator:label_query_judge", args=["acme", shared_text["query"].pk])
    chunk = re.search(r'data-chunk="(\d+)"', second).group(1)
    card = client.get(judge, {"chunk": chunk, "pos": 2}).content.decode()
    assert "… 266 characters shown above in card 1" in card
    response = client.post(judge, {"chunk": chunk, "grade": 2, "pos": 2}, HTTP_HX_REQUEST="true")
    assert "… 266 characters shown above in card 1" in response.content.decode()


def test_the_summary_is_in_chinese(login, personas, shared_text):
    client = login(personas["annotator"])
    url = reverse("annotator:label_query", args=["acme", shared_text["query"].pk])
    body = client.get(url, HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()
    assert "已在上方第 1 张卡片中显示" in body
