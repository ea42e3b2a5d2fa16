"""Whose labels a gold set rests on and how they become one grade: the recorded policy."""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext_lazy as _

from annotator.models import Judgment, Membership, Project
from annotator.sources import PEOPLE, Sources, resolve_sources, source_labels
from numerics.consensus import RULES
from numerics.mapping import MappingPolicy

# The consensus rules as screens name them.
RULE_LABELS = {
    "majority": _("majority"),
    "median": _("median"),
    "max": _("highest grade"),
    "min": _("lowest grade"),
}


@dataclass(frozen=True)
class ConsensusPolicy:
    """How several annotators' grades become one: recorded with every gold set and export."""

    rule: str = "majority"
    min_annotators: int = 1
    adjudicated_first: bool = True

    def __post_init__(self):
        if self.rule not in RULES:
            raise ValueError(f"unknown rule {self.rule!r}; choose one of {', '.join(RULES)}")
        if self.min_annotators < 1:
            raise ValueError("min_annotators must be at least 1")

    def to_dict(self) -> dict:
        return {
            "rule": self.rule,
            "min_annotators": self.min_annotators,
            "adjudicated_first": self.adjudicated_first,
        }


def mapping_of(policy: dict) -> MappingPolicy:
    """The mapping a gold set recorded (the default, ``any_overlap``, for versions frozen
    before mappings were recorded)."""
    text = policy.get("mapping")
    return MappingPolicy.parse(text) if text else MappingPolicy()


def resolve_mapping(
    project: Project, gold_set=None, asked: MappingPolicy | None = None
) -> MappingPolicy:
    """Which mapping policy maps labels onto units, wherever that is chosen: the one
    ``asked`` for; else a frozen gold set's own (``mapping_of``); else the project's
    setting (``Project.mapping_policy``, live labels)."""
    if asked is not None:
        return asked
    if gold_set is not None:
        return mapping_of(gold_set.policy)
    return project.mapping_policy()


class SelectionError(ValueError):
    """The chosen annotators cannot make a gold set (unknown names, or no labels)."""


def people(project: Project) -> list[str]:
    """Usernames of the project's members who log in (not imported assessors, not judges)."""
    return sorted(
        Membership.objects.filter(project=project, is_pseudo=False).values_list(
            "user__username", flat=True
        )
    )


def pseudo_annotators(project: Project) -> list[str]:
    return sorted(
        Membership.objects.filter(project=project, is_pseudo=True).values_list(
            "user__username", flat=True
        )
    )


def choose_annotators(
    project: Project, names: list[str] | None, sources: Sources | None = None
) -> list[str]:
    """Whose labels count: the named members, or (``None``) those who labelled among the
    ``sources`` (``annotator.sources``; the people when None).

    Pseudo-annotators (imported assessors, LLM judges) count only when named or chosen as
    sources. Unknown or non-member names are an error; so are named annotators none of
    whom has a label.
    """
    labelled = set(
        Judgment.objects.filter(query__project=project)
        .values_list("annotator__username", flat=True)
        .distinct()
    )
    if names is None:
        sources = resolve_sources(project, sources or (PEOPLE,))
        chosen = sorted(name for name in labelled if sources.counts(name))
    else:
        wanted = sorted({name.strip() for name in names if name.strip()})
        if not wanted:
            raise SelectionError("name at least one annotator")
        members = set(people(project)) | set(pseudo_annotators(project))
        unknown = [name for name in wanted if name not in members]
        if unknown:
            raise SelectionError(f"not annotators of this project: {', '.join(unknown)}")
        chosen = [name for name in wanted if name in labelled]
        if not chosen:
            raise SelectionError("the named annotators have no labels in this project")
    return chosen


def recorded_sources(gold_set) -> list[str]:
    """The label sources a frozen gold set stands on: as recorded, or (versions frozen
    before sources were recorded) those its annotators belong to."""
    policy = gold_set.policy
    if policy.get("sources"):
        return list(policy["sources"])
    return sorted(set(source_labels(gold_set.project, policy.get("annotators") or []).values()))
