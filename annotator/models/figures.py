"""Counts that pages show on every visit, kept up to date by the database itself.

Counting a project's documents or a chunking's chunks on every request grows with the
project (10,000,000 chunks take seconds), and counting them in one query with a join
multiplies rows (documents × queries). These tables hold the figures instead: triggers
on documents, queries and chunks (migration 0009) change them in the same statement as
the rows, whichever code writes them (imports, backups, the ORM, raw SQL). Python only
reads them; no ``save()`` of a project or chunking can write a stale figure back.
"""

from __future__ import annotations

from django.db import models

from .corpus import Chunking
from .projects import Project


class ProjectFigures(models.Model):
    """How many documents and queries a project holds (one row per project)."""

    project = models.OneToOneField(
        Project, primary_key=True, on_delete=models.CASCADE, related_name="figures"
    )
    documents = models.PositiveBigIntegerField(default=0)
    queries = models.PositiveBigIntegerField(default=0)

    class Meta:
        verbose_name_plural = "project figures"

    def __str__(self) -> str:
        return f"{self.documents} documents, {self.queries} queries"


class ChunkingFigures(models.Model):
    """How many chunks a chunking holds and over how many documents (one row each)."""

    chunking = models.OneToOneField(
        Chunking, primary_key=True, on_delete=models.CASCADE, related_name="figures"
    )
    chunks = models.PositiveBigIntegerField(default=0)
    documents = models.PositiveBigIntegerField(default=0)

    class Meta:
        verbose_name_plural = "chunking figures"

    def __str__(self) -> str:
        return f"{self.chunks} chunks over {self.documents} documents"
