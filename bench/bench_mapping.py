"""Span → chunk mapping at scale: 1,000,000 evidence spans onto 1,000,000 chunks.

    .venv/bin/python -m bench mapping

10,000 documents of 60,000 characters, each cut into 100 chunks of 800 characters with
200 of overlap (600-character stride); 100 evidence spans per document of 20–2,000
characters at random offsets, grades 0–3. Each policy is timed (median of REPEATS);
the target is ≤ 2 s.
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


if __name__ == "__main__":
    main()
