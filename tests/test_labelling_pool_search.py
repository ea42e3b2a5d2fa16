"""Candidate pools (runs, fallback search, stable shuffle) and full-text search (EN + ZH)."""

from __future__ import annotations

import numpy as np
import pytest
from django.urls import reverse

from annotator import pool
from annotator.models import Chunk, Chunking, Document, Query
from annotator.search import highlight, query_terms, search, split_terms
from annotator.templatetags.search_hits import marked
from metrics.models import Run

pytestmark = pytest.mark.django_db

TEXTS = {
    "en1": "The wing produces lift because of the pressure difference.",
    "en2": "Turbulent boundary layers increase drag on the fuselage.",
    "zh1": "机翼产生升力的原因是上下表面的压力差。",
    "zh2": "合同法规定，违约方应当承担赔偿责任。",
    "mix": "Percent 100% and under_score, <tag> & 𠀀𠀁 rare characters 升力.",
}


@pytest.fixture
def library(personas):
    project = personas["project"]
    chunking = Chunking.objects.create(project=project, name="whole")
    chunks = {}
    for key, text in TEXTS.items():
        document = Document.objects.create(
            project=project, doc_id=key, title=f"Title {key}", text=text
        )
        chunks[key] = Chunk.objects.create(
            chunking=chunking, chunk_id=f"{key}#0", document=document, start=0, end=len(text)
        )
    # The same words in another project must never show up.
    other = personas["other"]
    odoc = Document.objects.create(project=other, doc_id="o", text=TEXTS["zh1"] + TEXTS["en1"])
    ochunking = Chunking.objects.create(project=other, name="whole")
    Chunk.objects.create(chunking=ochunking, chunk_id="o#0", document=odoc, start=0, end=10)
    return {"project": project, "chunking": chunking, "chunks": chunks}


def found(library, text, **kwargs):
    ids = search(library["project"], text, chunking=library["chunking"], **kwargs)
    by_pk = {c.pk: k for k, c in library["chunks"].items()}
    return [by_pk[i] for i in ids]


# ------------------------------------------------------------------ search


def test_english_terms_are_all_required_and_case_insensitive(library):
    assert found(library, "wing") == ["en1"]
    assert found(library, "LIFT pressure") == ["en1"]
    assert found(library, "lift drag") == []
    assert set(found(library, "the")) == {"en1", "en2"}


def test_chinese_three_or_more_characters(library):
    assert found(library, "升力的原因") == ["zh1"]
    assert found(library, "违约方") == ["zh2"]
    assert found(library, "机翼 压力差") == ["zh1"]


def test_chinese_two_characters_use_the_like_fallback(library):
    assert set(found(library, "升力")) == {"zh1", "mix"}
    assert found(library, "合同") == ["zh2"]
    assert found(library, "合同 赔偿责任") == ["zh2"]


def test_quoted_phrases_and_special_characters_are_literal(library):
    assert found(library, '"pressure difference"') == ["en1"]
    assert found(library, '"difference pressure"') == []
    assert found(library, "100%") == ["mix"]
    assert found(library, "%") == ["mix"]
    assert found(library, "under_score") == ["mix"]
    assert found(library, "e_") == []  # "_" is not a wildcard
    assert found(library, "r_") == ["mix"]
    assert found(library, "<tag>") == ["mix"]
    assert found(library, "&") == ["mix"]
    assert found(library, "𠀀𠀁") == ["mix"]
    assert found(library, "") == []


def test_documents_are_searched_by_title_and_text(library):
    project = library["project"]
    docs = dict(Document.objects.filter(project=project).values_list("pk", "doc_id"))
    assert [docs[i] for i in search(project, "Title zh2", documents=True)] == ["zh2"]
    assert [docs[i] for i in search(project, "违约方", documents=True)] == ["zh2"]
    assert [docs[i] for i in search(project, "合同", documents=True)] == ["zh2"]
    assert sorted(docs[i] for i in search(project, "Title", documents=True)) == sorted(TEXTS)


def test_any_term_ranking_for_questions(library):
    assert query_terms("How does the wing produce lift?") == ["wing", "produce", "lift"]
    assert query_terms("机翼为什么产生升力") == [
        "机翼为",
        "翼为什",
        "为什么",
        "什么产",
        "么产生",
        "产生升",
        "生升力",
    ]
    assert query_terms("合同") == ["合同"]
    ranked = found(library, "How does the wing produce lift?", any_term=True)
    assert ranked[0] == "en1"
    assert "zh1" in found(library, "机翼为什么产生升力", any_term=True)
    assert found(library, "合同 about", any_term=True) == ["zh2"]


def test_index_follows_document_and_chunk_changes(library):
    zh2 = library["chunks"]["zh2"]
    document = zh2.document
    document.text = "完全不同的文本内容。"
    document.save()
    assert found(library, "违约方") == []
    assert found(library, "不同的文本") == ["zh2"]
    zh2.end = 4
    zh2.save()
    assert found(library, "不同的文本") == []
    assert found(library, "完全不同") == ["zh2"]
    zh2.delete()
    assert found(library, "完全不同") == []
    Chunk.objects.create(
        chunking=library["chunking"], chunk_id="new", document=document, start=2, end=7
    )
    assert (
        len(found_ids := search(library["project"], "不同的文本", chunking=library["chunking"]))
        == 1
    )
    assert Chunk.objects.get(pk=found_ids[0]).chunk_id == "new"


def test_split_terms_and_highlight():
    assert split_terms('wing "lift force"  机翼 wing') == ["wing", "lift force", "机翼"]
    pieces = highlight("Wing and wing, 机翼<b>", ["wing", "机翼"])
    assert pieces == [
        ("Wing", True),
        (" and ", False),
        ("wing", True),
        (", ", False),
        ("机翼", True),
        ("<b>", False),
    ]
    assert highlight("abc", []) == [("abc", False)]


# ------------------------------------------------------------------ pool


def make_run(project, chunking, name, rows):
    """rows: (query pk, chunk pk, score)."""
    run = Run(project=project, name=name, level="chunk", chunking=chunking)
    q, i, s = (np.array(col) for col in zip(*rows, strict=True))
    run.set_results(q, i, s)
    run.save()
    return run


def test_pool_is_the_union_of_every_runs_top_k(library):
    project, chunking, c = library["project"], library["chunking"], library["chunks"]
    query = Query.objects.create(project=project, qid="q", text="anything")
    other = Query.objects.create(project=project, qid="q2", text="other")
    make_run(
        project,
        chunking,
        "a",
        [
            (query.pk, c["en1"].pk, 9.0),
            (query.pk, c["en2"].pk, 8.0),
            (query.pk, c["zh1"].pk, 7.0),
            (other.pk, c["mix"].pk, 9.0),
        ],
    )
    make_run(
        project,
        chunking,
        "b",
        [
            (query.pk, c["zh1"].pk, 0.9),
            (query.pk, c["zh2"].pk, 0.5),
            (query.pk, c["mix"].pk, 0.1),
        ],
    )
    assert pool.candidate_chunk_ids(query, 2) == [
        c["en1"].pk,
        c["en2"].pk,
        c["zh1"].pk,
        c["zh2"].pk,
    ]
    assert len(pool.candidate_chunk_ids(query, 10)) == 5
    assert pool.candidate_chunk_ids(other, 10) == [c["mix"].pk]


def test_ties_are_broken_by_item_id_descending(library):
    project, chunking, c = library["project"], library["chunking"], library["chunks"]
    query = Query.objects.create(project=project, qid="q", text="anything")
    low, high = sorted([c["en1"].pk, c["en2"].pk])
    make_run(project, chunking, "tie", [(query.pk, low, 1.0), (query.pk, high, 1.0)])
    assert pool.candidate_chunk_ids(query, 1) == [high]


def test_without_runs_the_pool_comes_from_search(library):
    project, c = library["project"], library["chunks"]
    query = Query.objects.create(project=project, qid="q", text="机翼为什么产生升力？")
    ids = pool.candidate_chunk_ids(query, 10)
    assert c["zh1"].pk in ids and c["en2"].pk not in ids
    assert pool.candidate_chunk_ids(query, 10, chunking=library["chunking"]) == ids


def test_a_pluggable_ranking_source(library, monkeypatch):
    c = library["chunks"]
    query = Query.objects.create(project=library["project"], qid="q", text="x")
    source = lambda q, chunking: [[c["zh2"].pk, c["en1"].pk], [c["zh2"].pk]]  # noqa: E731
    monkeypatch.setattr(pool, "_registered_source", source)
    assert pool.candidate_chunk_ids(query, 5) == [c["zh2"].pk, c["en1"].pk]


def test_stable_shuffle_per_annotator():
    ids = list(range(1, 41))
    a1 = pool.stable_shuffle(ids, annotator_id=1, query_id=7)
    assert a1 == pool.stable_shuffle(list(reversed(ids)), annotator_id=1, query_id=7)
    assert sorted(a1) == ids and a1 != ids
    assert a1 != pool.stable_shuffle(ids, annotator_id=2, query_id=7)
    assert a1 != pool.stable_shuffle(ids, annotator_id=1, query_id=8)


def test_screen_hides_run_order_and_is_stable(login, personas, library):
    project, chunking, c = library["project"], library["chunking"], library["chunks"]
    query = Query.objects.create(project=project, qid="q", text="anything")
    ranked = [c[k].pk for k in ("en1", "en2", "zh1", "zh2", "mix")]
    make_run(
        project, chunking, "bm25-secret", [(query.pk, pk, 10.0 - i) for i, pk in enumerate(ranked)]
    )
    url = reverse("annotator:label_query", args=["acme", query.pk])

    def order(persona):
        body = login(personas[persona]).get(url).content.decode()
        return [pk for pk in sorted(ranked, key=lambda pk: body.index(f'id="cand-{pk}"'))]

    anna = order("annotator")
    assert anna == order("annotator")
    assert anna == pool.stable_shuffle(
        ranked, annotator_id=personas["annotator"].pk, query_id=query.pk
    )
    body = login(personas["annotator"]).get(url).content.decode()
    assert "bm25-secret" not in body and "10.0" not in body


def test_search_view_full_and_partial(login, personas, library):
    query = Query.objects.create(project=library["project"], qid="q", text="x")
    client = login(personas["annotator"])
    url = reverse("annotator:label_query_search", args=["acme", query.pk])
    full = client.get(url, {"q": "升力", "chunking": library["chunking"].pk}).content.decode()
    assert "<html" in full and "<mark>升力</mark>" in full
    partial = client.get(
        url, {"q": "升力", "chunking": library["chunking"].pk}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert partial.startswith('<div id="search-results"') and "2 chunks found" in partial
    assert f'id="found-{library["chunks"]["zh1"].pk}"' in partial
    docs = client.get(url, {"q": "违约", "scope": "documents"}, HTTP_HX_REQUEST="true")
    assert "1 document found" in docs.content.decode()
    assert 'name="granularity" value="document"' in docs.content.decode()
    assert client.get(url, {"scope": "nope"}).status_code == 400
    assert client.get(url, {"chunking": 999999}).status_code == 404


def test_grade_a_document_from_search_results(login, personas, library):
    from annotator.models import Judgment

    query = Query.objects.create(project=library["project"], qid="q", text="x")
    client = login(personas["annotator"])
    document = library["chunks"]["zh2"].document
    response = client.post(
        reverse("annotator:label_query_judge", args=["acme", query.pk]),
        {"granularity": "document", "document": document.pk, "grade": 3},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert body.startswith(f'<div class="doc-result" id="docres-{document.pk}"')
    judgment = Judgment.objects.get()
    assert (judgment.granularity, judgment.start, judgment.end) == (
        "document",
        0,
        len(document.text),
    )


def test_chinese_questions_fall_back_to_two_character_pieces(library):
    from annotator.search import han_bigrams

    assert han_bigrams("升力从哪来? lift") == ["升力", "力从", "从哪", "哪来"]
    # No three-character piece of the question is in any text; "升力" is.
    ranked = found(library, "升力从哪里来？", any_term=True)
    assert set(ranked) == {"zh1", "mix"}
    query = Query.objects.create(project=library["project"], qid="zq", text="升力从哪里来？")
    assert library["chunks"]["zh1"].pk in pool.candidate_chunk_ids(query, 10)
    # A question with good three-character matches keeps them first.
    assert found(library, "违约方的责任是什么", any_term=True)[0] == "zh2"


def test_search_hits_are_marked_and_every_piece_escaped():
    pieces = highlight("<b>Wing</b> & wings, owing: a wing.", ["wing"])
    html = marked(pieces)
    assert html == "&lt;b&gt;<mark>Wing</mark>&lt;/b&gt; &amp; wings, owing: a <mark>wing</mark>."
    evil = marked([("<script>", True), ("</mark><i>", False)])
    assert evil == "<mark>&lt;script&gt;</mark>&lt;/mark&gt;&lt;i&gt;"


def test_the_search_page_costs_the_same_queries_for_few_or_many_matches(login, personas, library):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    query = Query.objects.create(project=library["project"], qid="q", text="x")
    client = login(personas["annotator"])
    url = reverse("annotator:label_query_search", args=["acme", query.pk])
    counts = {}
    for many in (False, True):
        if many:
            for i in range(40):
                text = f"wing number {i}"
                document = Document.objects.create(
                    project=library["project"], doc_id=f"many{i}", text=text
                )
                Chunk.objects.create(
                    chunking=library["chunking"],
                    chunk_id=f"many{i}#0",
                    document=document,
                    start=0,
                    end=len(text),
                )
        client.get(url, {"q": "wing"})
        with CaptureQueriesContext(connection) as captured:
            body = client.get(url, {"q": "wing"}, HTTP_HX_REQUEST="true").content.decode()
        counts[many] = len(captured.captured_queries)
        assert body.count("<mark>") >= (30 if many else 1)
    assert counts[False] == counts[True]
