"""Writing a large import without holding the database's write lock for its whole run.

Rows are checked as they are read, outside any transaction. Good rows go into a hidden
staging project in short transactions of ``STAGE_BATCH`` rows, so annotators' saves slip
in between (SQLite has one writer at a time). When the whole file is good, one short
transaction moves the staged rows into the real project (the swap); when it is not, the
staged rows are deleted, again in short transactions. Readers never see a half import:
the staging project has no members, so no page, list or API shows it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.db.models import Model
from django.utils import timezone

from formats import FileRejected
from formats.errors import define, gettext_noop

from ..models import Chunk, Document, Project

CHANGED_MEANWHILE = define(
    "import.changed_meanwhile",
    gettext_noop("the project changed while the file was read; import the file again"),
)
STAGING_PREFIX = "~import-"
STAGE_BATCH = 500
# A staging project this old belongs to an import that died (its process was killed).
STALE_AFTER = timedelta(days=1)


class Staging:
    """A hidden project that collects one import's rows until the swap."""

    def __init__(self, target: Project) -> None:
        self.target = target
        self._project: Project | None = None
        self._batches: dict[type[Model], list[Model]] = {}

    @property
    def project(self) -> Project:
        """The staging project, created on first use (in its own short transaction)."""
        if self._project is None:
            discard_stale()
            self._project = Project.objects.create(
                slug=f"{STAGING_PREFIX}{uuid.uuid4().hex[:16]}",
                name=f"import into {self.target.slug} (in progress)",
            )
        return self._project

    def add(self, obj: Model) -> None:
        """Queue one row; a full batch is written at once, in a transaction of its own."""
        batch = self._batches.setdefault(type(obj), [])
        batch.append(obj)
        if len(batch) >= STAGE_BATCH:
            self.flush()

    def flush(self) -> None:
        for model, batch in self._batches.items():
            if batch:
                with transaction.atomic():
                    model.objects.bulk_create(batch, batch_size=STAGE_BATCH)
                batch.clear()

    def swap(self, move: Callable[[Project], None]) -> None:
        """Write what is queued, then run ``move(staging_project)`` and drop the staging
        project in one transaction. ``move`` may raise (nothing is then moved); the
        staged rows are discarded either way."""
        try:
            self.flush()
            with transaction.atomic():
                move(self.project)
                Project.objects.filter(pk=self.project.pk).delete()
            self._project = None
        except IntegrityError:
            # Another writer took one of these ids between the check and the move.
            raise FileRejected([CHANGED_MEANWHILE()]) from None
        finally:
            self.discard()

    def discard(self) -> None:
        """Delete every staged row, a batch per transaction, then the staging project."""
        self._batches.clear()
        if self._project is not None:
            _delete_staging(self._project)
            self._project = None


def _delete_staging(project: Project) -> None:
    for model, rows in (
        (Chunk, Chunk.objects.filter(chunking__project=project)),
        (Document, Document.objects.filter(project=project)),
    ):
        while True:
            pks = list(rows.values_list("pk", flat=True)[:STAGE_BATCH])
            if not pks:
                break
            with transaction.atomic():
                model.objects.filter(pk__in=pks).delete()
    Project.objects.filter(pk=project.pk).delete()


def discard_stale() -> None:
    """Remove what imports killed half-way left behind."""
    cutoff = timezone.now() - STALE_AFTER
    for project in Project.objects.filter(slug__startswith=STAGING_PREFIX, created_at__lt=cutoff):
        _delete_staging(project)
