"""Retrieval runs. A run's results are stored as arrays, not one row per result.

Dashboards evaluate whole runs at once with numpy, so the natural unit of storage is the
run: three parallel arrays (query pk, item pk, score) packed into one compressed blob.
A 1,000,000-line run is then one row, loads in milliseconds and never needs a per-result
SQL query. Rows are stored in trec_eval's order (query, score descending, then item id
descending in byte order), ranked once on the way in; ``metrics.rankings`` serves them.
"""

from __future__ import annotations

import io
import json
import math
import zipfile

import numpy as np
from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from annotator.models import Chunking, Project


def _readable(value):
    """``value`` with lone surrogates replaced by U+FFFD (a page or file can then hold it)."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [_readable(item) for item in value]
    if isinstance(value, dict):
        return {_readable(key): _readable(item) for key, item in value.items()}
    return value


def _bounded_int(text: str):
    """A JSON integer; one too long for Python to convert (over 4,300 digits) stays text."""
    return int(text) if len(text) <= 4300 else text[:20] + "…"


class ReadableJSONField(models.JSONField):
    """A JSON field whose stored values every page and export can show, even rows written
    before their values were checked: lone surrogates become U+FFFD, NaN and Infinity
    None, and an integer of thousands of digits a short text, instead of a 500 for
    everyone who opens the page."""

    def from_db_value(self, value, expression, connection):
        try:
            return _readable(super().from_db_value(value, expression, connection))
        except ValueError:  # an integer over Python's 4,300 digits
            return _readable(json.loads(value, parse_int=_bounded_int))


class RunLevel(models.TextChoices):
    CHUNK = "chunk", _("Chunks")
    DOCUMENT = "document", _("Documents")


class RunQuerySet(models.QuerySet):
    def without_results(self) -> RunQuerySet:
        return self.defer("results")

    def active(self) -> RunQuerySet:
        """Runs shown on dashboards and in comparisons: not archived."""
        return self.filter(archived_at__isnull=True)


class Run(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="runs")
    name = models.CharField(max_length=200)
    level = models.CharField(max_length=16, choices=RunLevel.choices)
    # Set for chunk-level runs: the chunking whose chunk ids the run retrieves.
    chunking = models.ForeignKey(
        Chunking, null=True, blank=True, on_delete=models.CASCADE, related_name="runs"
    )
    # Free-form configuration: chunk size, overlap, embedding model, reranker, k ...
    parameters = ReadableJSONField(default=dict, blank=True)
    source = models.CharField(max_length=255, blank=True)
    n_results = models.PositiveIntegerField(default=0)
    n_queries = models.PositiveIntegerField(default=0)
    # Lines left out when the user chose to import the known part of a file.
    n_dropped = models.PositiveIntegerField(default=0)
    dropped_summary = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Labels the owners give runs ("baseline", "reranker"), for filtering and grouping.
    tags = models.JSONField(default=list, blank=True)
    # The pipeline whose builds the run belongs to (its series has a trend chart).
    series = models.CharField(max_length=200, blank=True, default="")
    # Archived runs leave dashboards and comparisons; they can be restored.
    archived_at = models.DateTimeField(null=True, blank=True)
    # Last in the row (migration 0003): SQLite reads a column after a large blob only by
    # walking the blob's overflow pages, so every column listed after it made listing
    # runs read their results. Fields added later land after it: keep them few. Altering
    # a field on SQLite rebuilds the table with that field last (0004 did): the migration
    # must then put the results last again (0005; tests/test_run_columns.py checks).
    results = models.BinaryField(default=b"")

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
        """Store the three parallel arrays (already validated) in trec_eval's rank order
        (``rankings.storage_order``), the order every reader of the run takes."""
        from .rankings import storage_order  # it reads this module's Run

        query_pk = np.asarray(query_pk, dtype=np.int64)
        item_pk = np.asarray(item_pk, dtype=np.int64)
        score = np.asarray(score, dtype=np.float64)
        order = storage_order(self, query_pk, item_pk, score)
        self.store_results(query_pk, item_pk, score, order=order)

    def store_results(
        self,
        query_pk: np.ndarray,
        item_pk: np.ndarray,
        score: np.ndarray,
        *,
        order: np.ndarray | None = None,
    ) -> None:
        """The one writer of the stored results: the three arrays in storage order — as
        they are (a backup's results given new keys), or taken in ``order``
        (``set_results``), one array at a time so that a large run is never held twice."""
        query_pk = np.asarray(query_pk, dtype=np.int64)
        item_pk = np.asarray(item_pk, dtype=np.int64)
        score = np.asarray(score, dtype=np.float64)
        buffer = io.BytesIO()
        # An .npz as np.savez_compressed writes it (np.load reads it), but at deflate level
        # 1: a quarter of the CPU time of the default level for a blob about 10 % larger
        # (a 10,000,000-result run: 2.4 s and 72 MB against 9.9 s and 65 MB).
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
            for name, values in (("query", query_pk), ("item", item_pk), ("score", score)):
                with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                    if order is not None:
                        values = values[order]
                    np.lib.format.write_array(member, values, allow_pickle=False)
        self.results = buffer.getvalue()
        self.n_results = len(query_pk)
        self.n_queries = len(np.unique(query_pk))

    def get_results(self, *, scores: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(query pk, item pk, score) arrays; item pk is a Chunk or Document pk by level.
        Without ``scores`` the score array is not read (empty): about half of a run's
        decompression, as scores compress least."""
        if not self.results:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, np.zeros(0, dtype=np.float64)
        with np.load(io.BytesIO(bytes(self.results))) as data:
            score = data["score"] if scores else np.zeros(0, dtype=np.float64)
            return data["query"], data["item"], score


class MeasureChoice(models.Model):
    """The measures a user chose for a project's dashboards (registry names; ``@k`` stands
    for the dashboard's cutoff)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    measures = models.JSONField(default=list)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "project"], name="measure_choice_unique")
        ]

    def __str__(self) -> str:
        return ", ".join(self.measures)
