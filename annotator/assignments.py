"""Who labels which query: assignments, queues, progress and time spent."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Count, F, Q, Sum
from django.utils import timezone

from .models import Assignment, AssignmentStatus, Project, Query, Role

# A gap longer than this between two actions is a pause, not work.
MAX_STEP_SECONDS = 600.0


def select_queries(
    project: Project,
    *,
    tag: str = "",
    qids: Iterable[str] = (),
    max_assignees: int | None = None,
) -> list[int]:
    """Primary keys of the project's queries, by tag, by qid list, or all; in qid order.

    ``max_assignees`` keeps only queries with fewer assignees than that.
    """
    rows = project.queries.order_by("pk").values_list("pk", "qid", "tags")
    wanted = {q.strip() for q in qids if q.strip()}
    selected = []
    for pk, qid, tags in rows:
        if tag and tag not in (tags or []):
            continue
        if wanted and qid not in wanted:
            continue
        selected.append(pk)
    if max_assignees is not None:
        counts = dict(
            Assignment.objects.filter(project=project)
            .values("query_id")
            .annotate(n=Count("pk"))
            .values_list("query_id", "n")
        )
        selected = [pk for pk in selected if counts.get(pk, 0) < max_assignees]
    return selected


def project_tags(project: Project) -> list[str]:
    tags: set[str] = set()
    for row in project.queries.values_list("tags", flat=True):
        tags.update(t for t in (row or []) if isinstance(t, str))
    return sorted(tags)


def labellers(project: Project):
    """Members who can be given work (annotators first), real people only."""
    return (
        get_user_model()
        .objects.filter(
            memberships__project=project,
            memberships__is_pseudo=False,
            memberships__role__in=[Role.ANNOTATOR, Role.ADJUDICATOR, Role.OWNER],
        )
        .order_by("memberships__role", "username")
    )


def _existing(project: Project, query_ids: list[int]) -> dict[int, set[int]]:
    assignees: dict[int, set[int]] = defaultdict(set)
    rows = Assignment.objects.filter(project=project, query_id__in=query_ids).values_list(
        "query_id", "annotator_id"
    )
    for query_id, annotator_id in rows.iterator():
        assignees[query_id].add(annotator_id)
    return assignees


def _create(project: Project, pairs: list[tuple[int, int]], assigned_by) -> int:
    with transaction.atomic():
        before = Assignment.objects.filter(project=project).count()
        Assignment.objects.bulk_create(
            [
                Assignment(project=project, query_id=q, annotator_id=a, assigned_by=assigned_by)
                for q, a in pairs
            ],
            batch_size=1000,
            ignore_conflicts=True,
        )
        return Assignment.objects.filter(project=project).count() - before


def assign_evenly(
    project: Project, query_ids: list[int], annotator_ids: list[int], per_query: int, assigned_by
) -> int:
    """Give every query ``per_query`` assignees in all, spreading this batch evenly.

    Queries that already have assignees only get the missing ones. The batch is what is
    balanced: among the chosen annotators, the one with the fewest of these queries goes
    first, so nine queries over three people are three each even when one of them had
    no work before; ties go to the least loaded in the project, then to the order given.
    Returns how many were added.
    """
    if not annotator_ids or per_query < 1:
        return 0
    load = Counter(
        dict(
            Assignment.objects.filter(project=project, annotator_id__in=annotator_ids)
            .values("annotator_id")
            .annotate(n=Count("pk"))
            .values_list("annotator_id", "n")
        )
    )
    position = {a: i for i, a in enumerate(annotator_ids)}
    existing = _existing(project, query_ids)
    in_batch = Counter(a for have in existing.values() for a in have if a in position)
    pairs: list[tuple[int, int]] = []
    for query_id in query_ids:
        have = existing.get(query_id, set())
        missing = per_query - len(have)
        if missing <= 0:
            continue
        free = sorted(
            (a for a in annotator_ids if a not in have),
            key=lambda a: (in_batch[a], load[a], position[a]),
        )
        for annotator_id in free[:missing]:
            pairs.append((query_id, annotator_id))
            in_batch[annotator_id] += 1
            load[annotator_id] += 1
    return _create(project, pairs, assigned_by)


def assign_each(
    project: Project, query_ids: list[int], annotator_ids: list[int], assigned_by
) -> int:
    """By hand: every chosen annotator gets every chosen query."""
    existing = _existing(project, query_ids)
    pairs = [(q, a) for q in query_ids for a in annotator_ids if a not in existing.get(q, set())]
    return _create(project, pairs, assigned_by)


def unassign(project: Project, query_ids: list[int], annotator_ids: list[int]) -> int:
    """Take unfinished work back (labels already made stay); done assignments stay."""
    deleted, _ = (
        Assignment.objects.filter(
            project=project, query_id__in=query_ids, annotator_id__in=annotator_ids
        )
        .exclude(status=AssignmentStatus.DONE)
        .delete()
    )
    return deleted


@dataclass(frozen=True)
class Progress:
    open: int
    done: int
    skipped: int
    seconds: float

    @property
    def total(self) -> int:
        return self.open + self.done + self.skipped

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 0


def progress(project: Project, user) -> Progress:
    counts = Assignment.objects.filter(project=project, annotator=user).aggregate(
        open=Count("pk", filter=Q(status=AssignmentStatus.OPEN)),
        done=Count("pk", filter=Q(status=AssignmentStatus.DONE)),
        skipped=Count("pk", filter=Q(status=AssignmentStatus.SKIPPED)),
        seconds=Sum("time_spent_seconds"),
    )
    return Progress(counts["open"], counts["done"], counts["skipped"], counts["seconds"] or 0.0)


def team_progress(project: Project) -> list[dict]:
    """One row per person with work in the project: counts by status and time spent."""
    rows = (
        Assignment.objects.filter(project=project)
        .values("annotator_id", "annotator__username")
        .annotate(
            open=Count("pk", filter=Q(status=AssignmentStatus.OPEN)),
            done=Count("pk", filter=Q(status=AssignmentStatus.DONE)),
            skipped=Count("pk", filter=Q(status=AssignmentStatus.SKIPPED)),
            seconds=Sum("time_spent_seconds"),
            total=Count("pk"),
        )
        .order_by("annotator__username")
    )
    return list(rows)


def next_open(project: Project, user, *, after: Query | None = None) -> Assignment | None:
    """The next unfinished query of the user's queue (after ``after``, wrapping around)."""
    queue = Assignment.objects.filter(
        project=project, annotator=user, status=AssignmentStatus.OPEN
    ).select_related("query")
    if after is not None:
        following = queue.filter(query_id__gt=after.pk).order_by("query_id").first()
        if following is not None:
            return following
        queue = queue.exclude(query_id=after.pk)
    return queue.order_by("query_id").first()


def assignment_for(query: Query, user) -> Assignment | None:
    return Assignment.objects.filter(query=query, annotator=user).first()


def mark_opened(assignment: Assignment | None) -> None:
    if assignment is not None and assignment.opened_at is None:
        now = timezone.now()
        Assignment.objects.filter(pk=assignment.pk, opened_at__isnull=True).update(opened_at=now)
        assignment.opened_at = now


def clamp_seconds(raw) -> float:
    """Seconds reported by the browser, kept sane: a number in [0, MAX_STEP_SECONDS]."""
    try:
        seconds = float(raw)
    except (TypeError, ValueError):
        return 0.0
    if seconds != seconds:  # NaN
        return 0.0
    return min(max(seconds, 0.0), MAX_STEP_SECONDS)


def add_time(assignment: Assignment | None, seconds: float) -> None:
    if assignment is not None and seconds > 0:
        Assignment.objects.filter(pk=assignment.pk).update(
            time_spent_seconds=F("time_spent_seconds") + seconds
        )


def set_status(
    assignment: Assignment, status: str, *, reason: str = "", unjudged: int | None = None
) -> None:
    """``unjudged``: candidates left unjudged when the annotator confirmed "done"."""
    done = status == AssignmentStatus.DONE
    assignment.status = status
    assignment.skip_reason = reason if status == AssignmentStatus.SKIPPED else ""
    assignment.finished_at = timezone.now() if done else None
    assignment.unjudged_at_done = unjudged if done and unjudged else None
    assignment.save(update_fields=["status", "skip_reason", "finished_at", "unjudged_at_done"])
