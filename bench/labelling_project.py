"""The generated project the labelling benchmark measures: English and Chinese documents
cut into chunks, queries, two runs, assignments and judgments with their history."""

from __future__ import annotations

import random
import time

N_DOCUMENTS = 10_000
CHUNKS_PER_DOCUMENT = 10
N_QUERIES = 10_000
N_ANNOTATORS = 10
PER_QUERY = 2  # annotators per query
RUN_DEPTH = 20
N_JUDGMENTS = 100_000


def _words(rng: random.Random) -> list[str]:
    syllables = [
        "ka",
        "lo",
        "mi",
        "ne",
        "ru",
        "sa",
        "ti",
        "vo",
        "wing",
        "lift",
        "drag",
        "flow",
        "aero",
        "foil",
        "jet",
        "tail",
        "law",
        "case",
        "court",
        "term",
    ]
    return sorted({"".join(rng.choices(syllables, k=rng.randint(1, 3))) for _ in range(3000)})


def _han(rng: random.Random, n: int) -> str:
    return "".join(chr(rng.randint(0x4E00, 0x62FF)) for _ in range(n))


def _text(rng: random.Random, words: list[str], chinese: bool, size: int) -> str:
    if chinese:
        return _han(rng, size - 1) + "。"
    out = []
    length = 0
    while length < size:
        word = rng.choice(words)
        out.append(word)
        length += len(word) + 1
    return " ".join(out)[: size - 1] + "."


def generate(rng: random.Random) -> dict:
    import numpy as np
    from django.contrib.auth import get_user_model
    from django.db import transaction

    from annotator.labels import bulk_create_judgments
    from annotator.models import (
        Assignment,
        Chunk,
        Chunking,
        Document,
        Judgment,
        Membership,
        Project,
        Query,
        Role,
    )
    from metrics.models import Run

    users = get_user_model()
    words = _words(rng)
    started = time.perf_counter()
    with transaction.atomic():
        owner = users.objects.create_user("bench-owner", password="x")
        annotators = [
            users.objects.create_user(f"bench-a{i}", password="x") for i in range(N_ANNOTATORS)
        ]
        project = Project.objects.create(slug="bench", name="Benchmark")
        Membership.objects.create(project=project, user=owner, role=Role.OWNER)
        for user in annotators:
            Membership.objects.create(project=project, user=user, role=Role.ANNOTATOR)
        chunking = Chunking.objects.create(project=project, name="c200")
        chunk_size = 200
        docs = []
        for d in range(N_DOCUMENTS):
            chinese = d % 2 == 1
            text = "".join(
                _text(rng, words, chinese, chunk_size) for _ in range(CHUNKS_PER_DOCUMENT)
            )
            docs.append(
                Document(
                    project=project,
                    doc_id=f"d{d}",
                    title=f"Document {d} " + (_han(rng, 6) if chinese else rng.choice(words)),
                    text=text,
                    page_starts=[0, len(text) // 2],
                )
            )
        docs = Document.objects.bulk_create(docs, batch_size=1000)
        chunks = []
        for document in docs:
            for c in range(CHUNKS_PER_DOCUMENT):
                chunks.append(
                    Chunk(
                        chunking=chunking,
                        chunk_id=f"{document.doc_id}#{c}",
                        document=document,
                        start=c * chunk_size,
                        end=(c + 1) * chunk_size,
                    )
                )
        chunks = Chunk.objects.bulk_create(chunks, batch_size=2000)
        queries = Query.objects.bulk_create(
            [
                Query(
                    project=project,
                    qid=f"q{q}",
                    text=_han(rng, 12) + "？" if q % 2 else _text(rng, words, False, 60),
                    tags=["zh" if q % 2 else "en"],
                )
                for q in range(N_QUERIES)
            ],
            batch_size=2000,
        )
        chunk_pks = np.array([c.pk for c in chunks])
        query_pks = np.array([q.pk for q in queries])
        pools: dict[int, list] = {}
        nprng = np.random.default_rng(rng.randint(0, 2**31))
        for name in ("bm25", "dense"):
            picked = nprng.choice(chunk_pks, size=(N_QUERIES, RUN_DEPTH))
            scores = np.sort(nprng.random((N_QUERIES, RUN_DEPTH)), axis=1)[:, ::-1]
            run = Run(project=project, name=name, level="chunk", chunking=chunking)
            run.set_results(np.repeat(query_pks, RUN_DEPTH), picked.ravel(), scores.ravel())
            run.save()
            for qi, qpk in enumerate(query_pks.tolist()):
                pools.setdefault(qpk, []).extend(picked[qi, :10].tolist())
        assignments = []
        for qi, query in enumerate(queries):
            for k in range(PER_QUERY):
                annotator = annotators[(qi + k) % N_ANNOTATORS]
                assignments.append(
                    Assignment(project=project, query=query, annotator=annotator, assigned_by=owner)
                )
        Assignment.objects.bulk_create(assignments, batch_size=5000)
        by_pk = {c.pk: c for c in chunks}
        judgments = []
        per_pair = N_JUDGMENTS // (N_QUERIES * PER_QUERY) or 1
        for qi, query in enumerate(queries):
            pool = list(dict.fromkeys(pools[query.pk]))
            for k in range(PER_QUERY):
                annotator = annotators[(qi + k) % N_ANNOTATORS]
                for chunk_pk in pool[:per_pair]:
                    chunk = by_pk[chunk_pk]
                    judgments.append(
                        Judgment(
                            query=query,
                            annotator=annotator,
                            granularity="chunk",
                            document_id=chunk.document_id,
                            start=chunk.start,
                            end=chunk.end,
                            chunk=chunk,
                            grade=rng.randint(0, 3),
                        )
                    )
        bulk_create_judgments(judgments, changed_by=owner, batch_size=5000)
    return {
        "project": project,
        "annotators": annotators,
        "queries": queries,
        "pools": pools,
        "seconds": time.perf_counter() - started,
        "counts": {
            "documents": Document.objects.count(),
            "chunks": Chunk.objects.count(),
            "queries": Query.objects.count(),
            "judgments": Judgment.objects.count(),
            "assignments": Assignment.objects.count(),
        },
    }


# ------------------------------------------------------------------ measuring
