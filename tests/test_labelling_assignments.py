"""Assignments: spreading queries evenly, by hand, by tag; queues, progress and time."""

from __future__ import annotations

from collections import Counter

import pytest
from django.db import IntegrityError

from annotator import assignments as work
from annotator.models import Assignment, AssignmentStatus, Query

pytestmark = pytest.mark.django_db


@pytest.fixture
def queries(personas):
    project = personas["project"]
    return [
        Query.objects.create(
            project=project,
            qid=f"q{i:02d}",
            text=f"query {i}",
            tags=["法律"] if i % 3 == 0 else ["eng"],
        )
        for i in range(12)
    ]


def pks(objects):
    return [o.pk for o in objects]


def test_spread_evenly_gives_each_query_n_annotators(personas, queries):
    project, owner = personas["project"], personas["owner"]
    team = [personas["annotator"].pk, personas["annotator2"].pk, personas["adjudicator"].pk]
    added = work.assign_evenly(project, pks(queries), team, 2, owner)
    assert added == 24
    per_query = Counter(Assignment.objects.values_list("query_id", flat=True))
    assert set(per_query.values()) == {2}
    load = Counter(Assignment.objects.values_list("annotator_id", flat=True))
    assert sorted(load.values()) == [8, 8, 8]
    # Again: nothing more to do; raising N to 3 adds exactly one per query.
    assert work.assign_evenly(project, pks(queries), team, 2, owner) == 0
    assert work.assign_evenly(project, pks(queries), team, 3, owner) == 12
    assert Assignment.objects.filter(assigned_by=owner).count() == 36


def test_spread_evenly_balances_the_batch_not_the_total(personas, queries):
    project, owner = personas["project"], personas["owner"]
    anna, arno = personas["annotator"], personas["annotator2"]
    work.assign_each(project, pks(queries[:6]), [anna.pk], owner)
    work.assign_evenly(project, pks(queries[6:11]), [anna.pk, arno.pk], 1, owner)
    batch = Assignment.objects.filter(query__in=queries[6:11])
    load = Counter(batch.values_list("annotator_id", flat=True))
    # Five queries: two and three; the odd one goes to the one with less work overall.
    assert load == {anna.pk: 2, arno.pk: 3}


def test_by_tag_and_by_qid(personas, queries):
    project = personas["project"]
    chinese = work.select_queries(project, tag="法律")
    assert chinese == [q.pk for q in queries if "法律" in q.tags]
    assert work.select_queries(project, qids=["q01", " q02 ", "nope"]) == pks(queries[1:3])
    assert work.project_tags(project) == ["eng", "法律"]
    work.assign_each(project, chinese, [personas["annotator"].pk], personas["owner"])
    assert work.select_queries(project, max_assignees=1) == [
        q.pk for q in queries if q.pk not in chinese
    ]


def test_unassign_keeps_done_work(personas, queries):
    project, anna = personas["project"], personas["annotator"]
    work.assign_each(project, pks(queries[:3]), [anna.pk], personas["owner"])
    Assignment.objects.filter(query=queries[0]).update(status=AssignmentStatus.DONE)
    assert work.unassign(project, pks(queries), [anna.pk]) == 2
    assert list(Assignment.objects.values_list("query_id", flat=True)) == [queries[0].pk]


def test_one_assignment_per_query_and_annotator(personas, queries):
    project, anna = personas["project"], personas["annotator"]
    Assignment.objects.create(project=project, query=queries[0], annotator=anna)
    with pytest.raises(IntegrityError):
        Assignment.objects.create(project=project, query=queries[0], annotator=anna)


def test_progress_and_next_open(personas, queries):
    project, anna = personas["project"], personas["annotator"]
    work.assign_each(project, pks(queries[:4]), [anna.pk], personas["owner"])
    a = {x.query_id: x for x in Assignment.objects.all()}
    work.set_status(a[queries[0].pk], AssignmentStatus.DONE)
    work.set_status(a[queries[1].pk], AssignmentStatus.SKIPPED, reason="unclear")
    progress = work.progress(project, anna)
    assert (progress.done, progress.skipped, progress.open, progress.total) == (1, 1, 2, 4)
    assert progress.percent == 25
    assert work.next_open(project, anna).query == queries[2]
    assert work.next_open(project, anna, after=queries[2]).query == queries[3]
    assert work.next_open(project, anna, after=queries[3]).query == queries[2]  # wraps
    work.set_status(a[queries[2].pk], AssignmentStatus.DONE)
    work.set_status(a[queries[3].pk], AssignmentStatus.DONE)
    assert work.next_open(project, anna) is None


def test_team_progress_counts_time(personas, queries):
    project, anna = personas["project"], personas["annotator"]
    work.assign_each(project, pks(queries[:2]), [anna.pk], personas["owner"])
    for assignment in Assignment.objects.all():
        work.add_time(assignment, 30.5)
    (row,) = work.team_progress(project)
    assert row["annotator__username"] == "anna"
    assert (row["open"], row["total"], row["seconds"]) == (2, 2, 61.0)


def test_clamp_seconds():
    assert work.clamp_seconds("12.5") == 12.5
    assert work.clamp_seconds(None) == 0.0
    assert work.clamp_seconds("-1") == 0.0
    assert work.clamp_seconds("inf") == work.MAX_STEP_SECONDS
    assert work.clamp_seconds("nan") == 0.0


def test_labellers_are_real_people_who_can_label(personas):
    from annotator.models import Membership, Role
    from tests.conftest import make_user

    bot = make_user("llm-judge")
    Membership.objects.create(
        project=personas["project"], user=bot, role=Role.ANNOTATOR, is_pseudo=True
    )
    names = [u.username for u in work.labellers(personas["project"])]
    assert sorted(names) == ["adam", "alice", "anna", "arno"]
