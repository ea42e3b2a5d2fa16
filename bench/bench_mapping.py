"""Span → chunk mapping at scale: 1,000,000 evidence spans onto 1,000,000 chunks.

    .venv/bin/python -m bench mapping

10,000 documents of 60,000 characters, each cut into 100 chunks of 800 characters with
200 of overlap (600-character stride); 100 evidence spans per document of 20–2,000
characters at random offsets, grades 0–3. Each policy is timed (median of REPEATS);
the target is ≤ 2 s.

Then one query's labels after a change (50 spans in 5 documents) over the same million
units, in their shuffled order and in (document, start) order as a level's units come:
the mapping and the fragmentation counts, searching the evidence's documents' units
alone (as Assay does) and every unit (as it did), in the same run.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

N_DOCUMENTS = 10_000
CHUNKS_PER_DOCUMENT = 100
EVIDENCE_PER_DOCUMENT = 100
REPEATS = 5


def generate(seed: int = 11):
    rng = np.random.default_rng(seed)
    doc = np.repeat(np.arange(N_DOCUMENTS), CHUNKS_PER_DOCUMENT)
    start = np.tile(np.arange(CHUNKS_PER_DOCUMENT) * 600, N_DOCUMENTS)
    end = start + 800
    ev_doc = np.repeat(np.arange(N_DOCUMENTS), EVIDENCE_PER_DOCUMENT)
    length = rng.integers(20, 2000, ev_doc.size)
    ev_start = rng.integers(0, CHUNKS_PER_DOCUMENT * 600 - 2000, ev_doc.size)
    shuffle = rng.permutation(doc.size)  # units arrive in no particular order
    return (
        ev_doc,
        ev_start,
        ev_start + length,
        rng.integers(0, 4, ev_doc.size),
        doc[shuffle],
        start[shuffle],
        end[shuffle],
    )


def main() -> None:
    from numerics.mapping import MappingPolicy, fragmentation, map_evidence
    from numerics.spans import SpanArrays

    ev_doc, ev_start, ev_end, grade, unit_doc, unit_start, unit_end = generate()
    evidence = SpanArrays(ev_doc, ev_start, ev_end)
    units = SpanArrays(unit_doc, unit_start, unit_end)
    print(f"{len(evidence):,} evidence spans × {len(units):,} chunks, median of {REPEATS} runs\n")
    print("| policy | seconds | units judged |")
    print("|---|---:|---:|")
    for text in ["contains", "any_overlap", "evidence_overlap>=0.5", "chunk_overlap>=0.5"]:
        policy = MappingPolicy.parse(text)
        times = []
        for _ in range(REPEATS):
            started = time.perf_counter()
            grades = map_evidence(evidence, units, grade=grade, policy=policy)
            times.append(time.perf_counter() - started)
        print(f"| {text} | {statistics.median(times):.3f} | {(grades >= 0).sum():,} |")
    started = time.perf_counter()
    fragmentation(evidence, units, grade=grade, policy=MappingPolicy.parse("any_overlap"))
    print(f"| fragmentation diagnostics (any_overlap) | {time.perf_counter() - started:.3f} | — |")
    one_query(units)


def one_query(units) -> None:
    """One changed query's evidence over every unit: narrowed to its documents, and not."""
    from numerics import mapping
    from numerics.spans import SpanArrays

    rng = np.random.default_rng(5)
    doc = np.repeat(rng.choice(N_DOCUMENTS, 5, replace=False), 10)
    start = rng.integers(0, CHUNKS_PER_DOCUMENT * 600 - 2000, doc.size)
    evidence = SpanArrays(doc, start, start + rng.integers(20, 2000, doc.size))
    grade, query = rng.integers(0, 4, doc.size), np.zeros(doc.size, dtype=np.int64)
    policy = mapping.MappingPolicy.parse("any_overlap")
    order = np.lexsort((units.start, units.document))
    in_order = SpanArrays(units.document[order], units.start[order], units.end[order])
    narrowing = mapping._units_of_documents
    print(f"\nOne query's {doc.size} spans in 5 documents over {len(units):,} units, ms")
    print(f"(median of {REPEATS})\n")
    print("| units | work | every unit searched | its documents' units | ratio |")
    print("|---|---|---:|---:|---:|")
    for name, unit_arrays in (("shuffled", units), ("in (document, start) order", in_order)):
        for work, call in (
            ("mapping", lambda u: mapping.map_evidence(evidence, u, grade=grade, policy=policy)),
            (
                "fragmentation counts",
                lambda u: mapping.fragmentation_counts(
                    evidence, u, grade=grade, policy=policy, query=query
                ),
            ),
        ):
            medians = []
            for narrowed in (False, True):
                mapping._units_of_documents = narrowing if narrowed else (lambda u, e: None)
                times = []
                for _ in range(REPEATS):
                    started = time.perf_counter()
                    call(unit_arrays)
                    times.append(time.perf_counter() - started)
                medians.append(statistics.median(times) * 1000)
            mapping._units_of_documents = narrowing
            every, narrowed = medians
            print(f"| {name} | {work} | {every:.1f} | {narrowed:.1f} | {every / narrowed:.0f}× |")


if __name__ == "__main__":
    main()
