"""A short run file looks up the item ids it names, by key; a long one reads the whole id
map once. Either way the same rows are imported, the same lines reported and the same
wrong-chunking hint given (a 1,000-line run read all 1,000,000 document ids: 3.2 s)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotator.importing import common as importing
from annotator.models import Chunk, Chunking
from formats import FileRejected
from metrics.run_import import import_run
from tests import test_metrics_views
from tests.test_run_management import _write

pytestmark = pytest.mark.django_db

bench = test_metrics_views.bench  # the shared fixture


def _id_reads(statements: list[str]) -> list[str]:
    """Reads of chunk ids to match the file's (not the chunking's spans, read once and
    kept for every run of it)."""
    return [
        s
        for s in statements
        if s.startswith("SELECT") and '"chunk_id"' in s and '"annotator_chunk"."start"' not in s
    ]


def test_a_short_run_reads_only_the_ids_it_names(bench, tmp_path):
    path = _write(tmp_path, [("q0", "d0#0", 3), ("q0", "d1#1", 2), ("q1", "d2#0", 1)])
    halves = Chunking.objects.get(name="halves")
    with CaptureQueriesContext(connection) as captured:
        run = import_run(bench["project"], path, name="short", chunking=halves)
    assert run.n_results == 3
    reads = _id_reads([q["sql"] for q in captured.captured_queries])
    assert reads and all(" IN (" in sql for sql in reads), reads


def _outcomes(project, tmp_path, halves) -> list:
    """What importing a good, a partly unknown and a wrongly chunked file gives."""
    got = []
    good = _write(tmp_path, [("q0", "d0#0", 3), ("q0", "d1#1", 2), ("q1", "d2#0", 1)])
    run = import_run(project, good, name="good", chunking=halves)
    got.append([a.tolist() for a in run.get_results()])
    run.delete()
    unknown = _write(tmp_path, [("q0", "d0#0", 3), ("q0", "nope", 2), ("q9", "d2#0", 1)])
    for keep_known in (False, True):
        try:
            run = import_run(project, unknown, name="u", chunking=halves, keep_known=keep_known)
        except FileRejected as refused:
            got.append(refused.errors)
        else:
            got.append((run.n_dropped, run.dropped_summary))
            run.delete()
    wrong = _write(tmp_path, [("q0", f"d{d}/t0", 6 - d) for d in range(6)])
    with pytest.raises(FileRejected) as refused:
        import_run(project, wrong, name="w", chunking=halves)
    got.append(refused.value.errors)
    return got


def test_named_ids_and_the_whole_map_import_the_same(bench, tmp_path, monkeypatch):
    project = bench["project"]
    thirds = Chunking.objects.create(project=project, name="thirds")
    Chunk.objects.bulk_create(
        Chunk(chunking=thirds, chunk_id=f"{d.doc_id}/t0", document=d, start=0, end=5)
        for d in bench["docs"]
    )
    halves = Chunking.objects.get(name="halves")
    named = _outcomes(project, tmp_path, halves)
    monkeypatch.setattr(importing, "NAMED_IDS", 0)
    whole = _outcomes(project, tmp_path, halves)
    assert named == whole
    assert "--chunking thirds" in named[-1][0]
    assert named[1] and "unknown" in str(named[1][0])
