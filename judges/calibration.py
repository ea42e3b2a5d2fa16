"""Calibration: people against a judge version (or an imported pseudo-annotator).

On the (query, unit) items both graded at a level — people's grade being their consensus
(an adjudicated grade first), the judge's its max over its labels reaching the unit —
every agreement figure of ``numerics.agreement.compare_raters`` with bootstrap
intervals, and per query. Then the TREC-style check of what the judge would change:
each run's measures under people's labels only, and under people's labels with the
judge's grades filling the units people did not judge; Kendall's τ between the two
system rankings. Each gold is evaluated over its own queries, as trec_eval does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from annotator.models import Project, Query
from gold.units import (
    UnitGrades,
    annotator_unit_grades,
    live_labels,
    unit_grades,
    units_for_level,
)
from metrics.evaluation import Gold, evaluate_run
from metrics.models import Run
from metrics.rankings import can_evaluate
from numerics.agreement import compare_raters
from numerics.grades import N_GRADES
from numerics.mapping import MappingPolicy
from numerics.rank_correlation import kendall_tau
from numerics.significance import bootstrap_ci

from .scope import human_names

RESAMPLES = 1000


def raters(project: Project) -> list[str]:
    """Pseudo-annotators with labels in the project: judge versions and imported ones."""
    return sorted(
        project.memberships.filter(is_pseudo=True, user__judgments__query__project=project)
        .values_list("user__username", flat=True)
        .distinct()
    )


@dataclass
class Calibration:
    rater: str
    level: str
    n_people_items: int
    n_rater_items: int
    agreement: dict
    per_query: list[dict]
    measures: list[str]
    runs: list[dict] = field(default_factory=list)
    tau: dict[str, float | None] = field(default_factory=dict)


def _people_grades(project: Project, units, mapping, only: str | None = None) -> UnitGrades:
    # Labels given while the judge's suggestion was on screen are left out: they would
    # flatter the judge. ``only``: one person's labels alone (no adjudication), for a
    # member who labels blind.
    if only is not None:
        labels = live_labels(project, annotators=[only], adjudicated=False, post_edited=False)
    else:
        labels = live_labels(
            project, annotators=human_names(project), adjudicated=True, post_edited=False
        )
    return unit_grades(labels, units, mapping=mapping)


def _rater_grades(project: Project, rater: str, units, mapping):
    labels = live_labels(project, annotators=[rater], adjudicated=False)
    query, unit, _source, grade = annotator_unit_grades(labels, units, mapping)
    return query, unit, grade


def filled(people: UnitGrades, query, unit, grade) -> UnitGrades:
    """People's grades, with the rater's grade on every unit people did not judge."""
    n_units = max(len(people.units.ids), 1)
    taken = set((people.query * n_units + people.unit).tolist())
    hole = np.array([k not in taken for k in (query * n_units + unit).tolist()], dtype=bool)
    all_query = np.concatenate([people.query, query[hole]])
    all_unit = np.concatenate([people.unit, unit[hole]])
    all_grade = np.concatenate([people.grade, grade[hole]])
    count = np.concatenate(
        [people.n_annotators, np.ones(int(hole.sum()), dtype=people.n_annotators.dtype)]
    )
    order = np.lexsort((all_unit, all_query))
    return UnitGrades(
        query=all_query[order],
        unit=all_unit[order],
        grade=all_grade[order],
        n_annotators=count[order],
        units=people.units,
        policy={**people.policy, "holes_filled_by": "judge"},
    )


def calibrate(
    project: Project,
    rater: str,
    level: str,
    measures: list[str],
    *,
    mapping: MappingPolicy | None = None,
) -> Calibration:
    mapping = mapping or project.mapping_policy()
    units = units_for_level(project, level)
    people = _people_grades(project, units, mapping)
    query, unit, grade = _rater_grades(project, rater, units, mapping)
    n_units = max(len(units.ids), 1)
    people_key = people.query * n_units + people.unit
    rater_key = query * n_units + unit
    _shared, in_people, in_rater = np.intersect1d(people_key, rater_key, return_indices=True)
    a, b = people.grade[in_people], grade[in_rater]
    item_query = people.query[in_people]
    agreement = compare_raters(a, b, N_GRADES, n_resamples=RESAMPLES)
    qids = dict(
        Query.objects.filter(pk__in=np.unique(item_query).tolist()).values_list("pk", "qid")
    )
    per_query = []
    for pk in np.unique(item_query).tolist():
        mask = item_query == pk
        match = (a[mask] == b[mask]).astype(float)
        per_query.append(
            {
                "qid": qids[pk],
                "n": int(mask.sum()),
                "exact_agreement": float(match.mean()),
                "interval": bootstrap_ci(match, n_resamples=RESAMPLES),
                "mean_difference": float((b[mask] - a[mask]).mean()),
            }
        )
    per_query.sort(key=lambda r: (r["exact_agreement"], r["qid"]))
    result = Calibration(
        rater, level, int(people.query.size), int(query.size), agreement, per_query, measures
    )
    _system_rankings(project, result, people, filled(people, query, unit, grade))
    return result


def _system_rankings(
    project: Project, result: Calibration, people: UnitGrades, with_judge: UnitGrades
) -> None:
    runs = [
        r
        for r in Run.objects.filter(project=project).order_by("name")
        if can_evaluate(r, result.level)
    ]
    if not runs or not people.query.size:
        return
    gold_people = Gold(people, None, project.relevance_threshold)
    gold_filled = Gold(with_judge, None, project.relevance_threshold)
    for run in runs:
        only = evaluate_run(run, gold_people, result.measures)
        both = evaluate_run(run, gold_filled, result.measures)
        result.runs.append(
            {
                "name": run.name,
                "people": {m: only.mean(m) for m in result.measures},
                "filled": {m: both.mean(m) for m in result.measures},
            }
        )
    for measure in result.measures:
        result.tau[measure] = kendall_tau(
            [r["people"][measure] for r in result.runs], [r["filled"][measure] for r in result.runs]
        )
