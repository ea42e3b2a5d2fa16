"""Writing labels: every create, change, undo and removal goes through ``change_label``,
which refuses a save carrying an outdated version of its label (``label_version``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, connection, transaction

from numerics.grades import check_grade

from .assignments import add_time, assignment_for
from .evidence import Evidence
from .models import (
    Chunk,
    Granularity,
    Judgment,
    JudgmentEvent,
    JudgmentHistory,
    JudgmentTiming,
    KeptNote,
    Query,
)
from .revisions import bump

# The version a screen saw of a label it shows: NO_LABEL when there was none, else the
# time of the label's last change (``label_version``). A save that carries it is refused
# when the label changed since (another tab, another device): last writer does not win.
NO_LABEL = "none"


def label_version(updated_at: datetime | None) -> str:
    """The version token of a label last changed at ``updated_at`` (None: no label)."""
    return NO_LABEL if updated_at is None else updated_at.isoformat()


class LabelConflict(Exception):
    """The label changed since the screen that sends this save showed it; nothing saved.

    ``judgment`` is the label as it is now (None once removed); ``evidence`` what it is
    on, when the save did not name it (an undo names a logged change)."""

    def __init__(self, judgment: Judgment | None, evidence=None):
        super().__init__("the label changed since it was shown")
        self.judgment = judgment
        self.evidence = evidence


def check_version(judgment: Judgment | None, expected: str | None, grade, note) -> None:
    """Raise ``LabelConflict`` when ``expected`` is not ``judgment``'s version, unless the
    save asks for what the label already holds (or removes what is gone)."""
    if expected is None:
        return  # imports, the API, judges: no version, no check
    if label_version(judgment.updated_at if judgment else None) == expected:
        return
    if grade is None and judgment is None:
        return  # removing what is already gone
    if judgment is not None and judgment.grade == grade and note in (None, judgment.note):
        return  # the other session saved what this one asks for
    raise LabelConflict(judgment)


def _history(
    judgment: Judgment, event: str, changed_by, old_grade, old_note, action_id: str = ""
) -> JudgmentHistory:
    removed = event == JudgmentEvent.DELETE
    return JudgmentHistory.objects.create(
        judgment=None if removed else judgment,
        query_id=judgment.query_id,
        annotator_id=judgment.annotator_id,
        changed_by=changed_by,
        event=event,
        **judgment.span_fields(),
        chunk_id=judgment.chunk.chunk_id if judgment.chunk_id else "",
        old_grade=old_grade,
        new_grade=None if removed else judgment.grade,
        old_note=old_note or "",
        new_note="" if removed else judgment.note,
        suggestion_shown=False if removed else judgment.suggestion_shown,
        action_id=action_id,
    )


@dataclass(frozen=True)
class LabelChange:
    """What one call of ``change_label`` did."""

    evidence: Evidence
    judgment: Judgment | None  # the label after the change; None once removed
    history: JudgmentHistory | None  # the logged change; None when nothing changed
    undone: int | None = None  # an undo: the history row it reversed


def _current(query: Query, annotator, evidence: Evidence) -> Judgment | None:
    judgment = (
        Judgment.objects.select_for_update()
        .of(query, annotator)
        .filter(**evidence.lookup())
        .first()
    )
    chunk = evidence.chunk
    if (
        judgment is not None
        and chunk is not None
        and chunk.chunk_id
        and judgment.chunk_id == chunk.pk
    ):
        judgment.chunk = chunk  # already read: the history row names it without a query
    return judgment


def _kept(query: Query, annotator, evidence: Evidence):
    return KeptNote.objects.filter(
        query=query,
        annotator=annotator,
        granularity=evidence.granularity,
        document=evidence.document,
        start=evidence.start,
        end=evidence.end,
    )


def _note_for_new_label(query: Query, annotator, evidence: Evidence, note: str | None) -> str:
    """A new label's note: the one given, else the note kept on its evidence (which the
    label now holds, so the kept note goes)."""
    found = _kept(query, annotator, evidence).values_list("pk", "text").first()
    if found is None:
        return note or ""
    KeptNote.objects.filter(pk=found[0]).delete()
    return note or found[1]


def keep_note(
    *, query: Query, annotator, evidence: Evidence, text: str, action_id: str = ""
) -> LabelChange | None:
    """Keep a note on evidence: on the label if the annotator graded it (a logged change),
    else until its first grade, which then carries it (an empty text drops the kept note).
    Returns the label change, or None when the note was kept without a label."""
    with transaction.atomic():  # the label is read for update, as every writer reads it
        judgment = _current(query, annotator, evidence)
        if judgment is not None:
            return change_label(
                query=query,
                annotator=annotator,
                evidence=evidence,
                grade=judgment.grade,
                note=text,
                action_id=action_id,
            )
        if not text.strip():
            _kept(query, annotator, evidence).delete()
            return None
        KeptNote.objects.update_or_create(
            query=query,
            annotator=annotator,
            **evidence.span_fields(),
            defaults={"text": text, "chunk": evidence.chunk},
        )
    return None


def kept_notes(query: Query, annotator) -> dict[tuple[int, int, int], str]:
    """The annotator's kept notes on a query by (document pk, start, end)."""
    return {
        (d, s, e): text
        for d, s, e, text in KeptNote.objects.filter(query=query, annotator=annotator).values_list(
            "document_id", "start", "end", "text"
        )
    }


def hold_documents(pks: Iterable[int]) -> None:
    """Keep these documents' text from being replaced until the transaction ends.

    The lock a foreign key check takes (``FOR KEY SHARE``): Django's foreign keys are
    checked at commit on PostgreSQL, so a label being written would not hold its document
    otherwise. A file import that replaces a document locks it ``FOR UPDATE`` and then
    counts its labels, so it waits for this transaction and sees its label. SQLite has one
    writer at a time (transactions begin IMMEDIATE), which does the same."""
    pks = sorted(set(pks))
    if connection.vendor == "postgresql" and pks:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT 1 FROM annotator_document WHERE id = ANY(%s) FOR KEY SHARE",
                [pks],
            )


def _write(
    query,
    annotator,
    evidence,
    grade,
    note,
    changed_by,
    suggestion_shown=False,
    expected=None,
    action_id="",
):
    """The judgment row and its history row; (judgment or None, history or None)."""
    hold_documents([evidence.document.pk])
    judgment = _current(query, annotator, evidence)
    check_version(judgment, expected, grade, note)
    if grade is None:
        if judgment is None:
            return None, None
        old_grade, old_note = judgment.grade, judgment.note
        history = _history(
            judgment, JudgmentEvent.DELETE, changed_by, old_grade, old_note, action_id
        )
        judgment.delete()
        return None, history
    if judgment is None:
        try:
            with transaction.atomic():
                judgment = Judgment.objects.create(
                    query=query,
                    annotator=annotator,
                    **evidence.span_fields(),
                    chunk=evidence.chunk,
                    grade=grade,
                    note=_note_for_new_label(query, annotator, evidence, note),
                    suggestion_shown=suggestion_shown,
                )
        except IntegrityError:
            # A concurrent request created it first: fall through to an update.
            judgment = _current(query, annotator, evidence)
            check_version(judgment, expected, grade, note)
        else:
            history = _history(judgment, JudgmentEvent.CREATE, changed_by, None, "", action_id)
            return judgment, history
    new_note = judgment.note if note is None else note
    if judgment.grade == grade and judgment.note == new_note:
        return judgment, None
    old_grade, old_note = judgment.grade, judgment.note
    judgment.grade, judgment.note = grade, new_note
    judgment.suggestion_shown = suggestion_shown
    judgment.save(update_fields=["grade", "note", "suggestion_shown", "updated_at"])
    history = _history(judgment, JudgmentEvent.UPDATE, changed_by, old_grade, old_note, action_id)
    return judgment, history


def change_label(
    *,
    query: Query,
    annotator,
    evidence: Evidence,
    grade: int | None,
    note: str | None = None,
    changed_by=None,
    seconds: float = 0.0,
    suggestion_shown: bool = False,
    version: str | None = None,
    action_id: str = "",
) -> LabelChange:
    """Create, change or (``grade=None``) remove one label: the one way a label changes.

    In one transaction: the judgment, its history row, the seconds spent before the
    change (kept beside the history row) and the annotator's time on the query's
    assignment. A repeated identical grade and note changes nothing and logs nothing.
    ``note=None`` keeps the current note. Committed when this returns, so the caller may
    report the label as saved. ``suggestion_shown`` records that a judge's suggestion
    was on screen (post-edit mode), on the label and its history row. ``version`` is
    the label's version as the screen showed it (``label_version``): if the label
    changed since, ``LabelConflict`` is raised and nothing is written; without it
    (imports, API, judges) the change is made whatever the label's state. ``action_id``
    is the screen's id of the action (kept on the history row, found again by undo).
    """
    if grade is not None:
        check_grade(grade)
    changed_by = changed_by or annotator
    with transaction.atomic():
        bump(query.project_id)  # first: the project's writers queue here (see revisions)
        judgment, history = _write(
            query,
            annotator,
            evidence,
            grade,
            note,
            changed_by,
            suggestion_shown,
            version,
            action_id,
        )
        if history is not None and seconds:
            JudgmentTiming.objects.create(history=history, seconds=seconds)
        if seconds:
            add_time(assignment_for(query, annotator), seconds)
    return LabelChange(evidence, judgment, history)


class NothingToUndo(Exception):
    """The action named for undo logged no change (it failed, or changed nothing)."""


def undo_change(
    *,
    query: Query,
    user,
    history_pk: int | None = None,
    action_id: str = "",
    seconds: float = 0.0,
) -> LabelChange | None:
    """Put back the state before one of the user's own changes (itself a logged change).

    The change is named by its history row or by the action that made it (``action_id``:
    the screen's id of a key press, sent before the save answered). The undo is checked
    like any save: if the label no longer holds what that change made (another session
    changed it since), ``LabelConflict`` is raised and nothing is written. Returns None
    when no such history row is the user's own; ``NothingToUndo`` when the action logged
    no change; a change with no judgment and no history when its chunk no longer exists.
    """
    own = JudgmentHistory.objects.select_related("document", "judgment__chunk").filter(
        query=query, annotator=user, changed_by=user
    )
    if history_pk is not None:
        history = own.filter(pk=history_pk).first()
        if history is None:
            return None
    else:
        history = own.filter(action_id=action_id).order_by("-pk").first() if action_id else None
        if history is None:
            raise NothingToUndo(action_id)
    chunk = None
    if history.granularity == Granularity.CHUNK:
        chunk = history.judgment.chunk if history.judgment_id else None
        if chunk is None:
            chunk = Chunk.objects.filter(
                document=history.document,
                start=history.start,
                end=history.end,
                chunk_id=history.chunk_id,
            ).first()
        if chunk is None:  # the chunk itself is gone
            return LabelChange(Evidence.for_document(history.document), None, None)
    evidence = Evidence(history.granularity, history.document, history.start, history.end, chunk)
    with transaction.atomic():
        current = _current(query, user, evidence)
        made = (history.new_grade, history.new_note) if history.new_grade is not None else None
        now = (current.grade, current.note) if current is not None else None
        if now != made:
            raise LabelConflict(current, evidence)
        change = change_label(
            query=query,
            annotator=user,
            evidence=evidence,
            grade=history.old_grade,
            note=history.old_note if history.old_grade is not None else None,
            seconds=seconds,
        )
    return LabelChange(change.evidence, change.judgment, change.history, undone=history.pk)


def bulk_create_judgments(judgments: Iterable[Judgment], *, changed_by, batch_size=2000) -> int:
    """Insert many new labels (imports) with one history row each; caller holds the transaction."""
    count = 0
    batch: list[Judgment] = []

    def flush() -> None:
        nonlocal count
        if not count:  # the first batch: the project's revision moves before any row
            for project_id in (
                Query.objects.filter(pk__in={j.query_id for j in batch})
                .values_list("project_id", flat=True)
                .distinct()
            ):
                bump(project_id)
        hold_documents(j.document_id for j in batch)
        created = Judgment.objects.bulk_create(batch, batch_size=batch_size)
        if created and created[0].pk is None:
            # Backends without RETURNING for bulk inserts: reload ids by their unique key.
            raise RuntimeError("bulk_create did not return primary keys")
        JudgmentHistory.objects.bulk_create(
            [
                JudgmentHistory(
                    judgment=j,
                    query_id=j.query_id,
                    annotator_id=j.annotator_id,
                    changed_by=changed_by,
                    event=JudgmentEvent.CREATE,
                    **j.span_fields(),
                    chunk_id=j.chunk.chunk_id if j.chunk_id else "",
                    new_grade=j.grade,
                    new_note=j.note,
                )
                for j in created
            ],
            batch_size=batch_size,
        )
        count += len(created)
        batch.clear()

    for judgment in judgments:
        batch.append(judgment)
        if len(batch) >= batch_size:
            flush()
    if batch:
        flush()
    return count
