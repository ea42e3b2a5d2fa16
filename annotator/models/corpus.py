"""What is labelled: documents (text with page offsets), chunkings and their chunks, queries."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from numerics.spans import page_of, page_spans

from .projects import Project


class Document(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="documents")
    doc_id = models.CharField(max_length=255)
    title = models.CharField(max_length=1000, blank=True)
    text = models.TextField(blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    # Character offsets where each page starts; empty when the source has no pages.
    # Page i spans [page_starts[i], page_starts[i+1]) and the last page runs to len(text).
    page_starts = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "doc_id"], name="document_unique_id"),
        ]

    def __str__(self) -> str:
        return self.doc_id

    def page_spans(self) -> list[tuple[int, int]]:
        """Half-open (start, end) offsets of every page; one span for a page-less doc."""
        return page_spans(self.page_starts, len(self.text))

    def page_of(self, offset: int) -> int | None:
        """1-based page number holding ``offset``, or None when the doc has no pages."""
        return page_of(self.page_starts, offset)


class Chunking(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="chunkings")
    name = models.CharField(max_length=200)
    # Free-form: e.g. {"size": 256, "overlap": 32, "unit": "token"}.
    parameters = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="chunking_unique_name"),
        ]

    def __str__(self) -> str:
        return self.name


class Chunk(models.Model):
    chunking = models.ForeignKey(Chunking, on_delete=models.CASCADE, related_name="chunks")
    chunk_id = models.CharField(max_length=255)
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks")
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()

    class Meta:
        ordering = ["document_id", "start"]
        constraints = [
            models.UniqueConstraint(fields=["chunking", "chunk_id"], name="chunk_unique_id"),
            models.CheckConstraint(condition=Q(end__gt=models.F("start")), name="chunk_nonempty"),
        ]
        indexes = [models.Index(fields=["chunking", "document", "start"], name="chunk_doc_start")]

    def __str__(self) -> str:
        return self.chunk_id

    @property
    def text(self) -> str:
        return self.document.text[self.start : self.end]


class Query(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="queries")
    qid = models.CharField(max_length=255)
    text = models.TextField()
    reference_answer = models.TextField(blank=True)
    tags = models.JSONField(default=list, blank=True)
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "queries"
        constraints = [models.UniqueConstraint(fields=["project", "qid"], name="query_unique_qid")]

    def __str__(self) -> str:
        return self.qid
