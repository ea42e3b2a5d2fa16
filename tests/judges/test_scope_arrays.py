"""A job's scope as arrays: the same pairs, in the same order, as pooling them one by one.

A plan (and the cost estimate the job form asks for on every change) counts its pairs
from (query, unit) arrays and makes a ``Pair`` only of those it renders: the reference
below is the pair-by-pair reading of the pool, holes, sample and everything, written
out plainly; every scope at both levels must give exactly its pairs, in its order.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Chunk, Chunking, Document, Query
from judges.scope import SAMPLE_SEED, Pair, level_name, scope_keys, scope_pairs
from judges.services import estimate_tokens, plan_job
from metrics.evaluation import level_units
from metrics.models import Run
from metrics.rankings import can_evaluate

from .conftest import idle_judge
from .test_pool_from_index import ranked_pool


def _reference(project, scope, level, chunking, sample_size=None):
    """The scope pair by pair: each query (ascending), each run (by pk) its top
    ``pool_depth`` in rank order, a pair kept where first pooled."""
    units = level_units(project, level_name(level, chunking))
    runs = Run.objects.filter(project=project).order_by("pk")
    usable = [run for run in runs if can_evaluate(run, units.level)]
    pool = ranked_pool(usable, project.pool_depth, units)
    from annotator.sources import PEOPLE, resolve_sources
    from gold.units import annotator_unit_grades, live_labels

    labels = live_labels(project, sources=resolve_sources(project, (PEOPLE,)), adjudicated=True)
    query, unit, _s, _g = annotator_unit_grades(labels, units, project.mapping_policy())
    people = set(zip(query.tolist(), unit.tolist(), strict=True))
    if scope == "pool":
        keys = pool
    elif scope == "holes":
        keys = [k for k in pool if k not in people]
    elif scope == "sample":
        chosen = set(random.Random(SAMPLE_SEED).sample(range(len(pool)), sample_size))
        keys = [k for i, k in enumerate(pool) if i in chosen]
    else:
        keys = list(dict.fromkeys([*pool, *sorted(people)]))
    chunk_level = level == "chunk"
    return [
        Pair(q, int(units.document[u]), int(units.pk[u]) if chunk_level else None) for q, u in keys
    ]


@pytest.fixture
def pooled(personas):
    """8 documents of 3 chunks, 4 queries, two chunk runs and a document run ranking
    them differently (overlapping pools), pool depth 5, people's labels on some pairs."""
    project = personas["project"]
    project.pool_depth = 5
    project.save()
    chunking = Chunking.objects.create(project=project, name="c")
    documents, chunks = [], []
    for d in range(8):
        document = Document.objects.create(
            project=project, doc_id=f"doc{d}", title=f"Doc {d}", text="wing lift " * 9
        )
        documents.append(document)
        for c in range(3):
            chunks.append(
                Chunk.objects.create(
                    chunking=chunking,
                    chunk_id=f"doc{d}#{c}",
                    document=document,
                    start=30 * c,
                    end=30 * c + 30,
                )
            )
    queries = [
        Query.objects.create(project=project, qid=f"q{i}", text=f"wing {i}") for i in range(4)
    ]
    rng = np.random.default_rng(7)
    for name, items in (("a", chunks), ("b", chunks[::-1]), ("docs", documents)):
        level = "document" if name == "docs" else "chunk"
        run = Run(
            project=project,
            name=name,
            level=level,
            chunking=None if level == "document" else chunking,
        )
        rows_q = np.repeat([q.pk for q in queries[: 3 if name == "b" else 4]], len(items))
        rows_i = np.tile([i.pk for i in items], rows_q.size // len(items))
        run.set_results(rows_q, rows_i, rng.random(rows_q.size))
        run.save()
    for query, chunk in ((0, 0), (0, 5), (1, 7), (3, 20)):
        change_label(
            query=queries[query],
            annotator=personas["annotator"],
            evidence=Evidence.for_chunk(chunks[chunk]),
            grade=2,
        )
    change_label(
        query=queries[2],
        annotator=personas["annotator2"],
        evidence=Evidence.for_document(documents[6]),
        grade=1,
    )
    return {"project": project, "chunking": chunking, "queries": queries, "chunks": chunks}


@pytest.mark.parametrize("level", ["chunk", "document"])
@pytest.mark.parametrize("scope", ["pool", "holes", "sample", "all"])
def test_scope_arrays_are_the_pairs_one_by_one(pooled, scope, level):
    project = pooled["project"]
    chunking = pooled["chunking"] if level == "chunk" else None
    size = 7 if scope == "sample" else None
    expected = _reference(project, scope, level, chunking, size)
    # The runs' pools overlap, so order and duplicates matter.
    assert len(expected) == 7 if scope == "sample" else len(expected) > 10
    got = scope_pairs(project, scope=scope, level=level, chunking=chunking, sample_size=size)
    assert got == expected
    keys = scope_keys(project, scope=scope, level=level, chunking=chunking, sample_size=size)
    assert len(keys) == len(expected) and keys.pairs(3) == expected[:3]


def test_plan_counts_what_the_version_already_judged(pooled, settings):
    project, chunks = pooled["project"], pooled["chunks"]
    judge = idle_judge(project, api_key_env="ASSAY_JUDGE_KEY_J")
    pool = _reference(project, "pool", "chunk", pooled["chunking"])
    by_pk = {c.pk: c for c in chunks}
    done = pool[::4]
    for pair in done:
        change_label(
            query=Query.objects.get(pk=pair.query),
            annotator=judge.current.annotator,
            evidence=Evidence.for_chunk(by_pk[pair.chunk]),
            grade=1,
        )
    plan = plan_job(judge, scope="pool", level="chunk", chunking="c")
    assert plan.already == len(done)
    assert plan.n_pairs == len(plan.pairs) == len(pool) - len(done)
    assert plan.pairs == [p for p in pool if p not in set(done)]
    # Chunk labels are not document judgements: at document level nothing is done yet.
    at_documents = plan_job(judge, scope="pool", level="document")
    assert at_documents.already == 0
    assert at_documents.pairs == _reference(project, "pool", "document", None)


def test_plan_reads_the_same_number_of_rows_whatever_the_number_of_runs(pooled):
    """One query for the runs (with their chunkings), not one per run."""
    project, chunking = pooled["project"], pooled["chunking"]
    judge = idle_judge(project, api_key_env="ASSAY_JUDGE_KEY_J")

    def queries() -> int:
        plan_job(judge, scope="holes", level="chunk", chunking="c")  # caches warm
        with CaptureQueriesContext(connection) as captured:
            plan_job(judge, scope="holes", level="chunk", chunking="c")
        return len(captured)

    before = queries()
    query = pooled["queries"][0]
    for n in range(4):
        run = Run(project=project, name=f"more{n}", level="chunk", chunking=chunking)
        run.set_results(
            np.array([query.pk] * 3),
            np.array([c.pk for c in pooled["chunks"][n : n + 3]]),
            np.array([3.0, 2.0, 1.0]),
        )
        run.save()
    assert queries() == before


def test_scope_is_kept_until_a_label_or_a_run_changes(pooled):
    """Asked again, the holes read no label and rank no run; a label change and a new run
    are seen at once: always the pairs one by one."""
    project, chunking, chunks = pooled["project"], pooled["chunking"], pooled["chunks"]

    def holes() -> list[Pair]:
        return scope_pairs(project, scope="holes", level="chunk", chunking=chunking)

    assert holes() == _reference(project, "holes", "chunk", chunking)
    with CaptureQueriesContext(connection) as captured:
        again = holes()
    assert again == _reference(project, "holes", "chunk", chunking)
    assert not [q for q in captured.captured_queries if "annotator_judgment" in q["sql"]]
    hole = again[0]
    change_label(
        query=Query.objects.get(pk=hole.query),
        annotator=pooled_person(project),
        evidence=Evidence.for_chunk(next(c for c in chunks if c.pk == hole.chunk)),
        grade=1,
    )
    after = holes()
    assert hole not in after and after == _reference(project, "holes", "chunk", chunking)
    query = pooled["queries"][3]
    run = Run(project=project, name="late", level="chunk", chunking=chunking)
    run.set_results(np.array([query.pk]), np.array([chunks[-1].pk]), np.array([1.0]))
    run.save()
    late = holes()
    assert late == _reference(project, "holes", "chunk", chunking) and len(late) > len(after)


def pooled_person(project):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get(username="anna")


@pytest.mark.parametrize(
    "text", ["", "abc", "abcd", "abcde", "机翼的升力", "wing 机翼 lift", "é" * 7 + "x" * 9]
)
def test_estimate_tokens_counts_ascii_in_fours_and_other_characters_one_each(text):
    ascii_chars = sum(1 for ch in text if ord(ch) < 128)
    assert estimate_tokens(text) == (ascii_chars + 3) // 4 + (len(text) - ascii_chars)


def test_people_reach_is_read_back_and_brought_up_to_date_per_query(
    pooled, monkeypatch, tmp_path, settings
):
    """The pairs people's labels reach come back from their file in a new process, and
    after label changes (a new label, a removed one) only the changed queries' labels are
    mapped again, in a new process as in a warm one: always the pairs of a computation
    from scratch. Before, an estimate after any label change, or in a new process, mapped
    every person's label onto every unit (1.4–1.7 s right after a change at *large*)."""
    from judges import scope
    from metrics import label_state as label_state_module
    from metrics.rankings import cache

    settings.ASSAY_RUN_INDEX_DIR = tmp_path
    monkeypatch.setattr(label_state_module, "KEEP_AGAIN_SHARE", 1.0)
    project, chunks, queries = pooled["project"], pooled["chunks"], pooled["queries"]
    units = level_units(project, level_name("chunk", pooled["chunking"]))
    cache.clear()
    mapped = []  # the queries whose labels each mapping was given

    def counting(labels, *args):
        mapped.append(sorted(set(labels.query.tolist())))
        return real(labels, *args)

    real = scope._people
    monkeypatch.setattr(scope, "_people", counting)

    def reach():
        query, unit = scope.people_arrays(project, units, None)
        return list(zip(query.tolist(), unit.tolist(), strict=True))

    def from_scratch():
        cache.clear()
        for path in tmp_path.glob("*.npy"):
            path.unlink()
        return reach()

    first = reach()
    assert len(first) > 4 and first == sorted(first)
    assert mapped == [sorted(q.pk for q in queries)]
    cache.clear()  # a new process: the pairs from the file, nothing mapped
    assert reach() == first and len(mapped) == 1

    def relabel(query, chunk, grade):
        change_label(
            query=queries[query],
            annotator=pooled_person(project),
            evidence=Evidence.for_chunk(chunks[chunk]),
            grade=grade,
        )

    relabel(1, 12, 3)
    cache.clear()  # a new process behind the labels: query 1 alone is mapped again
    after_one = reach()
    assert mapped[1:] == [[queries[1].pk]]
    assert after_one == from_scratch() and after_one != first
    del mapped[:]
    relabel(3, 20, None)  # a warm process, the query's last label removed: query 3 alone
    after_two = reach()
    assert mapped == [[]] and not [q for q, _u in after_two if q == queries[3].pk]
    assert after_two == from_scratch()
