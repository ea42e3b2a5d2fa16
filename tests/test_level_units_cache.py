"""A level's units are kept per process while they stay the same: a dashboard reads no
document or chunk row until one is added, deleted or a document replaced in place."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotator.models import Chunk, Chunking, Document
from gold.units import DOCUMENTS, PAGES, level_units, units_for_level

pytestmark = pytest.mark.django_db


def _reads(project, level, table: str) -> tuple:
    with CaptureQueriesContext(connection) as captured:
        units = level_units(project, level)
    return units, sum(f'FROM "{table}"' in q["sql"] for q in captured)


def _same(a, b) -> bool:
    return a.fingerprint == b.fingerprint


@pytest.mark.parametrize("level", [DOCUMENTS, PAGES])
def test_document_units_are_read_again_only_when_documents_change(personas, level):
    project = personas["project"]
    first = Document.objects.create(project=project, doc_id="a", text="x" * 10)
    Document.objects.create(project=project, doc_id="b", text="y" * 20)
    level_units(project, level)
    units, reads = _reads(project, level, "annotator_document")
    assert reads == 0 and _same(units, units_for_level(project, level))
    Document.objects.create(project=project, doc_id="c", text="z" * 5)  # added
    units, reads = _reads(project, level, "annotator_document")
    assert reads == 1 and list(units.ids) == list(units_for_level(project, level).ids)
    first.text = "x" * 99  # replaced in place
    first.page_starts = [0, 50]
    first.save()
    units, reads = _reads(project, level, "annotator_document")
    assert reads == 1 and _same(units, units_for_level(project, level))
    assert int(units.end.max()) == 99
    first.delete()  # deleted (one added beside it: the count alone would not tell)
    Document.objects.create(project=project, doc_id="d", text="w")
    units, reads = _reads(project, level, "annotator_document")
    assert reads == 1 and _same(units, units_for_level(project, level))
    assert "a" not in {i.split("#")[0] for i in units.ids}


def test_chunk_units_are_read_again_only_when_chunks_change(personas):
    project = personas["project"]
    document = Document.objects.create(project=project, doc_id="a", text="x" * 30)
    chunking = Chunking.objects.create(project=project, name="c")
    Chunk.objects.create(chunking=chunking, chunk_id="a#0", document=document, start=0, end=10)
    level_units(project, "c")
    units, reads = _reads(project, "c", "annotator_chunk")
    assert reads == 0 and list(units.ids) == ["a#0"]
    added = Chunk.objects.create(
        chunking=chunking, chunk_id="a#1", document=document, start=10, end=20
    )
    units, reads = _reads(project, "c", "annotator_chunk")
    assert reads == 1 and list(units.ids) == ["a#0", "a#1"]
    added.delete()
    Chunk.objects.create(chunking=chunking, chunk_id="a#2", document=document, start=20, end=30)
    units, _n = _reads(project, "c", "annotator_chunk")
    assert list(units.ids) == ["a#0", "a#2"]
    with pytest.raises(ValueError):
        level_units(project, "no-such-chunking")
