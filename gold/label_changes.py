"""What changed in a project's labels since a version: the queries the history names.

A *version* is (label revision, newest judgment history pk, newest adjudication history
pk) of a project when its labels were read. What is derived per query (live labels,
disputes) is brought up to date by reading again only the queries whose history rows are
newer than the version's, while the revision has not been reset since
(``annotator.revisions``: a reset is a change the history does not explain).
"""

from __future__ import annotations

from dataclasses import replace

from django.db.models import Max

from annotator.caches import cache
from annotator.models import JudgmentHistory, Project
from annotator.revisions import Revision, revision

from .models import AdjudicationHistory

Version = tuple[int, int, int]


def _newest(history, project: Project) -> int:
    """The newest history row of the project (0 without any)."""
    return history.objects.filter(query__project=project).aggregate(m=Max("pk"))["m"] or 0


def current_version(project: Project, number: int) -> Version:
    """The version of labels read from now on at revision ``number``. Read it before the
    labels: a change in between is seen again (re-reading a query is idempotent)."""
    return (number, _newest(JudgmentHistory, project), _newest(AdjudicationHistory, project))


def follows(version: Version, now: Revision) -> bool:
    """Can what was read at ``version`` be brought to ``now`` from the history? Not when
    the revision was reset since, nor when it stands behind ``version`` (a database
    restored from before it)."""
    return now.reset <= version[0] <= now.number


def changes_since(project: Project, version: Version, number: int) -> tuple[list[int], Version]:
    """(sorted pks of the queries whose labels or adjudications changed since ``version``,
    the version at revision ``number`` once they are read again)."""
    _old, judgment_mark, adjudication_mark = version
    judgment_rows = list(
        JudgmentHistory.objects.filter(query__project=project, pk__gt=judgment_mark).values_list(
            "pk", "query_id"
        )
    )
    adjudication_rows = list(
        AdjudicationHistory.objects.filter(
            query__project=project, pk__gt=adjudication_mark
        ).values_list("pk", "query_id")
    )
    changed = sorted({q for _pk, q in judgment_rows} | {q for _pk, q in adjudication_rows})
    return changed, (
        number,
        max([judgment_mark, *(pk for pk, _q in judgment_rows)]),
        max([adjudication_mark, *(pk for pk, _q in adjudication_rows)]),
    )


def kept_up_to_date(project: Project, key: tuple, *, read, write, derive, splice):
    """What is derived per query from a project's labels (``derive(queries)``: of those
    queries, or of all with None), kept per process under ``key`` and in a file
    (``read()``, ``write(kept)``), brought up to date with the label revision: only the
    queries the history names since are derived again and spliced in
    (``splice(kept, fresh, changed)``). A revision the history cannot explain (``follows``)
    or nothing kept means a full derivation. The kept value is a frozen dataclass with
    ``version`` and ``unkept`` (not in the file yet) fields. A new process writes what it
    caught up with; a running one leaves the file to the next full derivation."""
    now = revision(project.pk)
    kept = cache.peek(key)
    if kept is not None and kept.version[0] == now.number:
        return kept
    from_file = kept is None
    if from_file:  # a new process: as a process last kept it
        kept = read()
    if kept is not None and kept.version[0] != now.number and follows(kept.version, now):
        changed, version = changes_since(project, kept.version, now.number)
        if changed:
            fresh = splice(kept, derive(changed), changed)
            kept = replace(fresh, unkept=kept.unkept or from_file)
        kept = replace(kept, version=version)
    elif kept is None or kept.version[0] != now.number:
        kept = replace(derive(None), version=current_version(project, now.number), unkept=True)
    if kept.unkept:
        write(kept)
    kept = replace(kept, unkept=False)
    cache.put(key, kept)
    return kept
