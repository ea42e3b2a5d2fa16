"""The built-in BM25 baseline: a run over any chunking (or the documents) of a project."""

from __future__ import annotations

import numpy as np
from django.db import transaction

from annotator.models import Chunk, Chunking, Project
from numerics.bm25 import build_index, search

from .models import Run, RunLevel
from .tasks import index_after_import

BM25_PARAMETERS = {"model": "bm25", "k1": 1.2, "b": 0.75, "tokens": "words + Han uni/bigrams"}


def bm25_run(
    project: Project,
    *,
    chunking: Chunking | None = None,
    name: str | None = None,
    k: int = 100,
    replace: bool = False,
    created_by=None,
) -> Run:
    """Retrieve the top ``k`` chunks (or documents) of every query with BM25 and store a Run."""
    if chunking is not None:
        texts_by_doc = dict(project.documents.values_list("pk", "text"))
        rows = list(
            Chunk.objects.filter(chunking=chunking)
            .order_by("pk")
            .values_list("pk", "document_id", "start", "end")
        )
        item_pk = np.array([r[0] for r in rows], dtype=np.int64)
        texts = [texts_by_doc[doc][start:end] for _, doc, start, end in rows]
        level = RunLevel.CHUNK
        default_name = f"bm25 · {chunking.name}"
        parameters = {**BM25_PARAMETERS, "chunking": chunking.name, **chunking.parameters}
    else:
        rows = list(project.documents.order_by("pk").values_list("pk", "title", "text"))
        item_pk = np.array([r[0] for r in rows], dtype=np.int64)
        texts = [f"{title}\n{text}" for _, title, text in rows]
        level = RunLevel.DOCUMENT
        default_name = "bm25 · documents"
        parameters = dict(BM25_PARAMETERS)
    parameters["k"] = k
    queries = list(project.queries.order_by("pk").values_list("pk", "text"))
    query_pk = np.array([q[0] for q in queries], dtype=np.int64)
    q_index, d_index, scores = search(build_index(texts), [q[1] for q in queries], k=k)
    with transaction.atomic():
        name = name or default_name
        if replace:
            Run.objects.filter(project=project, name=name).delete()
        run = Run(
            project=project,
            name=name,
            level=level,
            chunking=chunking,
            parameters=parameters,
            source="built-in BM25",
            created_by=created_by,
        )
        run.set_results(query_pk[q_index], item_pk[d_index], scores)
        run.save()
        index_after_import(run)
    return run
