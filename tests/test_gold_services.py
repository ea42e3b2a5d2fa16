import pytest

from annotator.evidence import Evidence
from annotator.labels import change_label
from gold.models import AdjudicationHistory, GoldSet
from gold.services import ConsensusPolicy, adjudicate, freeze_gold_set
from gold.versions import diff_gold_sets, unit_map
from numerics.mapping import MappingPolicy

pytestmark = pytest.mark.django_db


def chunk_grades(gold_set) -> list[int]:
    """The consensus grades of the gold set's units in the corpus' one-chunk chunking."""
    return list(unit_map(gold_set, "c256", MappingPolicy()).values())


@pytest.fixture
def disagreement(personas, corpus):
    evidence = Evidence.for_chunk(corpus["chunk"])
    change_label(query=corpus["query"], annotator=personas["annotator"], evidence=evidence, grade=3)
    change_label(
        query=corpus["query"], annotator=personas["annotator2"], evidence=evidence, grade=1
    )
    return evidence


def test_freeze_snapshots_labels_and_applies_the_policy(personas, corpus, disagreement):
    project = personas["project"]
    v1 = freeze_gold_set(project, "main", policy=ConsensusPolicy("min"))
    assert (v1.version, v1.n_labels, v1.n_queries) == (1, 2, 1)
    assert chunk_grades(v1) == [1]
    v2 = freeze_gold_set(project, "main", policy=ConsensusPolicy("max"))
    assert v2.version == 2
    assert chunk_grades(v2) == [3]
    diff = diff_gold_sets(v1, v2, level="c256")
    assert diff["changed"] == [
        {"query": corpus["query"].pk, "qid": "q1", "unit": "d1#0", "old": 1, "new": 3}
    ]
    assert (diff["n_old"], diff["n_new"], diff["added"], diff["removed"]) == (1, 1, [], [])


def test_adjudicated_grade_wins_and_is_kept_in_history(personas, corpus, disagreement):
    adjudicate(
        query=corpus["query"],
        evidence=disagreement,
        grade=2,
        reason="partial",
        adjudicator=personas["adjudicator"],
    )
    adjudicate(
        query=corpus["query"],
        evidence=disagreement,
        grade=2,
        reason="partial",
        adjudicator=personas["adjudicator"],
    )  # repeated: no new history row
    adjudicate(
        query=corpus["query"],
        evidence=disagreement,
        grade=3,
        reason="full",
        adjudicator=personas["adjudicator"],
    )
    history = list(AdjudicationHistory.objects.values_list("old_grade", "new_grade"))
    assert history == [(None, 2), (2, 3)]
    gold = freeze_gold_set(personas["project"], "g", policy=ConsensusPolicy("min", 2))
    assert chunk_grades(gold) == [3]


def test_minimum_annotators_leaves_units_undecided(personas, corpus):
    change_label(
        query=corpus["query"],
        annotator=personas["annotator"],
        evidence=Evidence.for_document(corpus["document"]),
        grade=2,
    )
    gold = freeze_gold_set(personas["project"], "g", policy=ConsensusPolicy("majority", 2))
    assert chunk_grades(gold) == []


def test_gold_sets_are_immutable(personas, corpus, disagreement):
    gold = freeze_gold_set(personas["project"], "g", policy=ConsensusPolicy())
    with pytest.raises(ValueError, match="immutable"):
        gold.save()
    with pytest.raises(ValueError, match="immutable"):
        gold.labels.first().save()
    assert GoldSet.objects.get().policy["rule"] == "majority"


def test_bad_policy_is_refused():
    with pytest.raises(ValueError, match="unknown rule 'mean'"):
        ConsensusPolicy("mean")
    with pytest.raises(ValueError, match="min_annotators"):
        ConsensusPolicy("max", 0)
