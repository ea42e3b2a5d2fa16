"""Retrieval runs. A run's results are stored as arrays, not one row per result.

Dashboards evaluate whole runs at once with numpy, so the natural unit of storage is the
run: three parallel arrays (query pk, item pk, score) packed into one compressed blob.
A 1,000,000-line run is then one row, loads in milliseconds and never needs a per-result
SQL query. Their order carries no meaning: the metrics engine orders each query's
results itself (score descending, then item id descending, as trec_eval does).
"""

from __future__ import annotations

import io

import numpy as np
from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from annotator.models import Chunking, Project


class RunLevel(models.TextChoices):
    CHUNK = "chunk", _("Chunks")
    DOCUMENT = "document", _("Documents")


class RunQuerySet(models.QuerySet):
    def without_results(self) -> RunQuerySet:
        return self.defer("results")


class Run(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="runs")
    name = models.CharField(max_length=200)
    level = models.CharField(max_length=16, choices=RunLevel.choices)
    # Set for chunk-level runs: the chunking whose chunk ids the run retrieves.
    chunking = models.ForeignKey(
        Chunking, null=True, blank=True, on_delete=models.CASCADE, related_name="runs"
    )
    # Free-form configuration: chunk size, overlap, embedding model, reranker, k ...
    parameters = models.JSONField(default=dict, blank=True)
    source = models.CharField(max_length=255, blank=True)
    n_results = models.PositiveIntegerField(default=0)
    n_queries = models.PositiveIntegerField(default=0)
    # Lines left out when the user chose to import the known part of a file.
    n_dropped = models.PositiveIntegerField(default=0)
    dropped_summary = models.JSONField(default=dict, blank=True)
    results = models.BinaryField(default=b"")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = RunQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="run_unique_name"),
            models.CheckConstraint(
                condition=(models.Q(level="chunk") & models.Q(chunking__isnull=False))
                | (models.Q(level="document") & models.Q(chunking__isnull=True)),
                name="run_chunking_iff_chunk_level",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def set_results(self, query_pk: np.ndarray, item_pk: np.ndarray, score: np.ndarray) -> None:
        """Store the three parallel arrays (already validated), in trec_eval's rank order:
        query, score descending, item id descending — so evaluations need not sort again."""
        query_pk = np.asarray(query_pk, dtype=np.int64)
        item_pk = np.asarray(item_pk, dtype=np.int64)
        score = np.asarray(score, dtype=np.float64)
        order = np.lexsort((-self._id_rank(item_pk), -score, query_pk))
        buffer = io.BytesIO()
        np.savez_compressed(buffer, query=query_pk[order], item=item_pk[order], score=score[order])
        self.results = buffer.getvalue()
        self.n_results = len(query_pk)
        self.n_queries = len(np.unique(query_pk))

    def _id_rank(self, item_pk: np.ndarray) -> np.ndarray:
        """Each item's position in the id string order of its chunking (or documents)."""
        from annotator.models import Chunk, Document

        if self.chunking_id is not None:
            rows = Chunk.objects.filter(chunking_id=self.chunking_id).values_list("pk", "chunk_id")
        else:
            rows = Document.objects.filter(project_id=self.project_id).values_list("pk", "doc_id")
        rows = sorted(rows, key=lambda row: row[1].encode())
        pks = np.array([pk for pk, _id in rows], dtype=np.int64)  # index = id string rank
        if pks.size == 0:
            return np.zeros(item_pk.size, dtype=np.int64)
        by_pk = np.argsort(pks)
        position = np.minimum(np.searchsorted(pks[by_pk], item_pk), pks.size - 1)
        return by_pk[position]

    def get_results(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(query pk, item pk, score) arrays; item pk is a Chunk or Document pk by level."""
        if not self.results:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, np.zeros(0, dtype=np.float64)
        with np.load(io.BytesIO(bytes(self.results))) as data:
            return data["query"], data["item"], data["score"]
