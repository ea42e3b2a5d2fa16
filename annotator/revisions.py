"""A project's label revision: one number moved in the transaction of every label change.

Every writer of labels, adjudications and gold sets calls ``bump`` first in its
transaction (``annotator.labels``, ``gold.services``, imports, backups); deleting a
document, query, chunking or chunk (whose labels go by cascade, with no history row)
bumps it through the signals below and marks the revision a *reset*: the history does
not say what changed. A document changed in place (imported again with ``replace``) is
a reset too: the units labels are mapped onto may have moved. So caches of what labels
derive are keyed by (project, revision) and cost one primary-key read to check, whatever
the size of other projects.

Bumping first takes the project row's write lock (PostgreSQL) or the database's (SQLite)
before any history row is written, so within a project history rows are numbered in the
order their transactions commit: a reader that saw history up to row N has seen every
earlier row of that project.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from django.db import IntegrityError, connection, transaction
from django.db.models.signals import post_save, pre_delete
from django.dispatch import receiver

from .models import Chunk, Chunking, Document, LabelRevision, Project, Query


@dataclass(frozen=True)
class Revision:
    """Where a project's labels stand: ``number`` moves with every change; ``reset`` is
    the latest number the history rows do not explain."""

    number: int
    reset: int


def bump(project_id: int, *, reset: bool = False) -> None:
    """Move the project's revision on (``reset``: a change the history does not explain).
    Call it first in the transaction that changes labels.

    Every label save runs this UPDATE: it is written as SQL rather than built by the ORM
    on every save."""
    if _moved(project_id, reset):
        return
    try:
        with transaction.atomic():  # the project's first change
            LabelRevision.objects.create(project_id=project_id, number=1, reset=int(reset))
    except IntegrityError:  # another writer created it first
        _moved(project_id, reset)


# ``update(number=F("number") + 1)`` (and ``reset`` with it: the right-hand sides read
# the row as it was, so both become the new number), written once.
_BUMP = 'UPDATE annotator_labelrevision SET "number" = "number" + 1 WHERE project_id = %s'
_BUMP_RESET = (
    'UPDATE annotator_labelrevision SET "number" = "number" + 1, "reset" = "number" + 1 '
    "WHERE project_id = %s"
)


def _moved(project_id: int, reset: bool) -> bool:
    """The UPDATE of ``bump`` on the project's row; whether there was one."""
    with connection.cursor() as cursor:
        cursor.execute(_BUMP_RESET if reset else _BUMP, [project_id])
        return cursor.rowcount > 0


def revision(project_id: int) -> Revision:
    """The project's revision: one read by primary key ((0, 0) before any change)."""
    found = (
        LabelRevision.objects.filter(project_id=project_id).values_list("number", "reset").first()
    )
    return Revision(*(found or (0, 0)))


def _once_per_delete(origin, project_id) -> None:
    """Bump once per delete call (``origin`` is the instance or queryset deleted): a
    cascade sends this signal for every row it removes."""
    if isinstance(origin, Project):
        return  # the whole project goes
    marker = "_assay_revision_bumped"
    done = getattr(origin, marker, None)
    if done is None:
        done = set()
        try:
            setattr(origin, marker, done)
        except AttributeError:
            done = None
    if done is not None and project_id in done:
        return
    bump(project_id, reset=True)
    if done is not None:
        done.add(project_id)


@receiver(pre_delete, sender=Document)
@receiver(pre_delete, sender=Query)
@receiver(pre_delete, sender=Chunking)
def _labels_deleted_with(sender, instance, origin=None, **kwargs) -> None:
    _once_per_delete(origin, instance.project_id)


@receiver(post_save, sender=Document)
def _document_replaced(sender, instance, created=False, raw=False, **kwargs) -> None:
    """A document changed in place (a file imported again with ``replace``, the admin):
    what its units are may have changed, which the history does not say."""
    if not created and not raw:
        bump(instance.project_id, reset=True)


@receiver(pre_delete, sender=Chunk)
def _labels_deleted_with_chunk(sender, instance, origin=None, **kwargs) -> None:
    if isinstance(origin, Document | Chunking | Project):
        return  # bumped for the document or chunking (or the project goes)
    marker = "_assay_chunk_project"
    project_id = getattr(origin, marker, None)
    if project_id is None:
        project_id = (
            Chunking.objects.filter(pk=instance.chunking_id)
            .values_list("project_id", flat=True)
            .first()
        )
        with contextlib.suppress(AttributeError):
            setattr(origin, marker, project_id)
    if project_id is not None:
        _once_per_delete(origin, project_id)
