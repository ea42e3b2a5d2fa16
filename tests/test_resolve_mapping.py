"""One rule chooses the mapping policy (``gold.policy.resolve_mapping``): the one asked
for, else a frozen gold set's own, else the project's setting; every export and measure
follows it."""

from __future__ import annotations

from gold.models import GoldSet
from gold.policy import resolve_mapping
from nuggets.exporting import build_nugget_export
from numerics.mapping import MappingPolicy


def gold_set(project, version, policy):
    return GoldSet.objects.create(project=project, name="team", version=version, policy=policy)


def test_asked_then_the_gold_sets_own_then_the_projects(personas):
    project = personas["project"]
    project.mapping = "contains"
    project.save()
    frozen = gold_set(project, 1, {"mapping": "evidence_overlap>=0.5"})
    older = gold_set(project, 2, {})  # frozen before mappings were recorded
    asked = MappingPolicy.parse("chunk_overlap>=0.25")
    assert resolve_mapping(project, frozen, asked) == asked
    assert resolve_mapping(project, None, asked) == asked
    assert str(resolve_mapping(project, frozen)) == "evidence_overlap>=0.5"
    assert str(resolve_mapping(project, older)) == "any_overlap"
    assert str(resolve_mapping(project)) == "contains"
    project.mapping = ""
    assert str(resolve_mapping(project)) == "any_overlap"


def test_a_gold_sets_nugget_export_maps_under_the_gold_sets_mapping(personas):
    """The nugget export of a gold set (the web's download) used the project's mapping
    while the command used the gold set's: both take the gold set's now."""
    project = personas["project"]
    project.mapping = "contains"
    project.save()
    frozen = gold_set(project, 1, {"mapping": "evidence_overlap>=0.5"})
    export = build_nugget_export(project, gold_set=frozen, level="documents")
    assert export.policy == "evidence_overlap>=0.5"
    live = build_nugget_export(project, level="documents")
    assert live.policy == "contains"
