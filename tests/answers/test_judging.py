"""Answer judgements are written by one service: each change kept in history, a save
against a changed judgement refused, an action undone by its id."""

from __future__ import annotations

import pytest

from answers.judging import (
    JudgmentConflict,
    JudgmentRefused,
    NothingToUndo,
    Target,
    change_judgment,
    judgment_version,
    undo_judgment,
)
from answers.models import AnswerJudgment, AnswerJudgmentHistory, Aspect

pytestmark = pytest.mark.django_db


def q1_answer(answer_run):
    return answer_run["run"].answers.get(query__qid="q1")


def test_every_aspect_is_judged_and_each_change_is_kept(answer_run):
    answer = q1_answer(answer_run)
    anna = answer_run["annotator"]
    cited, _second, uncited = answer.sentences.order_by("number")
    citation = cited.citations.get()
    targets = [
        (Target(Aspect.NUGGET, answer_run["nuggets"]["n1"].pk), 2),
        (Target(Aspect.SUPPORT, citation.pk), 1),
        (Target(Aspect.NEEDS_CITATION, uncited.pk), 0),
        (Target(Aspect.CRAG), 3),
    ]
    for target, value in targets:
        change_judgment(answer=answer, annotator=anna, target=target, value=value, action_id="a1")
    assert AnswerJudgment.objects.filter(annotator=anna).count() == 4
    change = change_judgment(
        answer=answer, annotator=anna, target=Target(Aspect.CRAG), value=2, action_id="a2"
    )
    assert change.history.event == "update"
    assert (change.history.old_value, change.history.new_value) == (3, 2)
    # The same value again changes nothing and logs nothing.
    again = change_judgment(answer=answer, annotator=anna, target=Target(Aspect.CRAG), value=2)
    assert again.history is None
    removed = change_judgment(answer=answer, annotator=anna, target=Target(Aspect.CRAG), value=None)
    assert removed.judgment is None and removed.history.event == "delete"
    events = list(
        AnswerJudgmentHistory.objects.filter(aspect=Aspect.CRAG).values_list(
            "event", "old_value", "new_value"
        )
    )
    assert events == [("create", None, 3), ("update", 3, 2), ("delete", 2, None)]
    nugget_row = AnswerJudgmentHistory.objects.get(aspect=Aspect.NUGGET)
    assert nugget_row.nugget_key == "n1"


def test_targets_outside_the_answer_and_values_off_scale_are_refused(answer_run):
    answer = q1_answer(answer_run)
    other = answer_run["run"].answers.get(query__qid="q2")
    anna = answer_run["annotator"]
    cited = answer.sentences.get(number=1)
    foreign = other.citations.get()
    refused = [
        (Target(Aspect.SUPPORT, foreign.pk), 1),  # another answer's citation
        (Target(Aspect.NEEDS_CITATION, cited.pk), 1),  # a cited sentence
        (Target(Aspect.NUGGET, answer_run["nuggets"]["n1"].pk), 3),  # off the scale
        (Target(Aspect.CRAG), 4),
        (Target(Aspect.CRAG), True),
        (Target("tone"), 1),
    ]
    for target, value in refused:
        with pytest.raises(JudgmentRefused):
            change_judgment(answer=answer, annotator=anna, target=target, value=value)
    # q2 has no nuggets: q1's nugget is not one of its answer's targets.
    with pytest.raises(JudgmentRefused):
        change_judgment(
            answer=other,
            annotator=anna,
            target=Target(Aspect.NUGGET, answer_run["nuggets"]["n1"].pk),
            value=1,
        )
    assert not AnswerJudgment.objects.exists()
    assert not AnswerJudgmentHistory.objects.exists()


def test_a_save_against_a_judgement_changed_since_is_refused(answer_run):
    answer = q1_answer(answer_run)
    anna = answer_run["annotator"]
    target = Target(Aspect.CRAG)
    shown = judgment_version(None)
    first = change_judgment(answer=answer, annotator=anna, target=target, value=3, version=shown)
    # Another tab, which showed no judgement, saves "missing": refused, nothing written.
    with pytest.raises(JudgmentConflict) as raised:
        change_judgment(answer=answer, annotator=anna, target=target, value=1, version=shown)
    assert raised.value.judgment.value == 3
    assert AnswerJudgment.objects.get().value == 3
    assert AnswerJudgmentHistory.objects.count() == 1
    # Saving what it already holds is no conflict; the current version is accepted.
    change_judgment(answer=answer, annotator=anna, target=target, value=3, version=shown)
    version = judgment_version(first.judgment.updated_at)
    change_judgment(answer=answer, annotator=anna, target=target, value=1, version=version)
    assert AnswerJudgment.objects.get().value == 1


def test_undo_by_action_id_puts_back_the_value_before(answer_run):
    answer = q1_answer(answer_run)
    anna = answer_run["annotator"]
    nugget = Target(Aspect.NUGGET, answer_run["nuggets"]["n2"].pk)
    change_judgment(answer=answer, annotator=anna, target=nugget, value=1, action_id="k1")
    change_judgment(answer=answer, annotator=anna, target=nugget, value=2, action_id="k2")
    undone = undo_judgment(answer=answer, user=anna, action_id="k2")
    assert undone.judgment.value == 1 and undone.undone is not None
    undone = undo_judgment(answer=answer, user=anna, action_id="k1")
    assert undone.judgment is None
    assert not AnswerJudgment.objects.exists()
    assert AnswerJudgmentHistory.objects.count() == 4  # the undos are logged changes
    with pytest.raises(NothingToUndo):
        undo_judgment(answer=answer, user=anna, action_id="never")
    # Another person's action is not this annotator's to undo.
    with pytest.raises(NothingToUndo):
        undo_judgment(answer=answer, user=answer_run["annotator2"], action_id="k1")


def test_undo_after_another_session_changed_the_judgement_is_a_conflict(answer_run):
    answer = q1_answer(answer_run)
    anna = answer_run["annotator"]
    target = Target(Aspect.CRAG)
    change_judgment(answer=answer, annotator=anna, target=target, value=3, action_id="k1")
    change_judgment(answer=answer, annotator=anna, target=target, value=0, action_id="other")
    with pytest.raises(JudgmentConflict):
        undo_judgment(answer=answer, user=anna, action_id="k1")
    assert AnswerJudgment.objects.get().value == 0


def test_judgements_are_per_annotator(answer_run):
    answer = q1_answer(answer_run)
    target = Target(Aspect.CRAG)
    change_judgment(answer=answer, annotator=answer_run["annotator"], target=target, value=3)
    change_judgment(answer=answer, annotator=answer_run["annotator2"], target=target, value=0)
    assert sorted(AnswerJudgment.objects.values_list("value", flat=True)) == [0, 3]
