"""Evaluating stored runs against gold grades at a level, with the numeric engine.

The gold side comes from ``gold.units`` (live labels under the default consensus, or a
frozen gold set); the run side is the run ranked at the same level by
``metrics.rankings`` (the one ranking every reader takes). Unit codes follow the units'
ids in byte order, so ties are broken exactly as trec_eval breaks them on the exported
files; the dashboard and ``manage.py evaluate`` on the exported qrels and run give the
same numbers (tested).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from urllib.parse import urlencode

import numpy as np
from django.utils.translation import gettext as _

from annotator.models import Project, Query
from annotator.sources import Sources, resolve_sources
from gold.models import GoldSet
from gold.policy import recorded_sources, resolve_mapping
from gold.units import (
    DOCUMENTS,
    UnitGrades,
    Units,
    level_units,
)
from numerics.gain import GainRule
from numerics.mapping import MappingPolicy
from numerics.measures import RunIndex, evaluate_index
from numerics.measures.trec_eval import expand_measures
from numerics.significance import bootstrap_cis

from . import score_cache
from .gain import default_gain, describe, gained
from .label_state import LabelState, counted_labels, label_state, level_grades
from .models import Run
from .rankings import (
    LevelMismatch,
    can_evaluate,
    lookup,
    run_version,
    unit_codes,
)
from .run_indexes import run_index

__all__ = ["LevelMismatch", "can_evaluate", "lookup"]  # where the views meet them

# The dashboard level at which every run is measured on its own units: a chunk run on its
# chunking's chunks, a document run on documents, all from the same labels.
OWN = "own"
# Above this share of whole-document labels, chunk and page figures earn a warning.
DOCUMENT_LABEL_WARNING = 0.5

# The dashboard's measures until a user chooses others: registry names, "@k" standing for
# the dashboard's cutoff.
DEFAULT_MEASURES = ["Hit@k", "P@k", "R@k", "F1@k", "MRR@k", "MAP", "nDCG@k", "Rprec"]
# Offered as checkboxes by the measure picker; any other registry name can be typed.
MEASURE_CATALOGUE = [
    *DEFAULT_MEASURES,
    "RR",
    "Bpref",
    "P(rel=2)@k",
    "R(rel=2)@k",
    "nDCG(dcg='exp-log2')@k",
    "nDCG",
    "Success(rel=2)@k",
]
MAX_MEASURES = 20
LOW_COVERAGE = 0.8  # Judged@k below this earns a warning
# Percentile bootstrap intervals on the dashboard: 1,000 resamples (Efron & Tibshirani
# 1993 advise at least that many for percentile intervals), drawn once per query count.
DASHBOARD_RESAMPLES = 1000


@dataclass
class Gold:
    """Gold grades of one level, ready for the engine."""

    grades: UnitGrades
    gold_set: GoldSet | None
    threshold: int
    # Set when the grades come from the per-process label state (``load_gold``): the
    # grades' cache key and that state, which the runs' cached scores follow.
    origin: tuple | None = None
    state: LabelState | None = None
    # The label sources the live grades stand on (None for a frozen gold set, whose
    # recorded policy says whose labels it holds).
    sources: Sources | None = None
    # How source quality enters the grades (``metrics.gain``): none, weight or minimum.
    gain: GainRule = field(default_factory=GainRule)
    gain_asked: bool = False  # named by the setting, not the gold set's or project's own
    project: Project | None = field(default=None, compare=False, repr=False)

    @property
    def units(self) -> Units:
        return self.grades.units

    @cached_property
    def query_pks(self) -> np.ndarray:
        return np.unique(self.grades.query)

    @cached_property
    def qids(self) -> list[str]:
        # The project's queries are read whole: a list of thousands of pks costs more to
        # send than the few queries without gold.
        queries = (
            Query.objects.filter(project=self.project)
            if self.project is not None
            else Query.objects.filter(pk__in=self.query_pks.tolist())
        )
        names = dict(queries.values_list("pk", "qid"))
        return [names[int(pk)] for pk in self.query_pks]

    @cached_property
    def code(self) -> np.ndarray:
        """Unit index → code whose order is the unit ids' byte order (trec_eval's)."""
        return unit_codes(self.units)

    @property
    def source_names(self) -> list[str]:
        """The label sources the grades stand on: the chosen ones for live labels, the
        recorded ones for a frozen gold set."""
        if self.gold_set is not None:
            return gold_set_sources(self.gold_set)
        return self.sources.names if self.sources is not None else []

    @property
    def gain_text(self) -> str:
        """The gain rule in words (``metrics.gain.describe``)."""
        project = self.gold_set.project if self.gold_set is not None else self.project
        return describe(self.gain, project)

    @property
    def description(self) -> dict:
        return {
            "gold": f"{self.gold_set.name} v{self.gold_set.version}" if self.gold_set else "live",
            **self.grades.policy,
            "sources": self.source_names,
            "gain": str(self.gain),
        }


def gold_set_sources(gold_set: GoldSet) -> list[str]:
    """The sources a frozen gold set records (``gold.policy.recorded_sources``)."""
    return recorded_sources(gold_set)


def indexed_run(run: Run, gold: Gold) -> RunIndex:
    """The run at the gold's level, indexed by (query pk, unit code); cached per process
    and in a file (``metrics.run_indexes``)."""
    return run_index(run, gold.units)


def load_gold(
    project: Project,
    level: str,
    *,
    gold_set: GoldSet | None = None,
    mapping: MappingPolicy | None = None,
    state: LabelState | None = None,
    sources: Sources | None = None,
    gain: GainRule | None = None,
) -> Gold:
    """Gold grades at ``level`` from a frozen gold set (its own mapping unless another is
    given) or the live labels of ``sources`` (resolved; ``people,assessors`` when None);
    ``state``: ``label_state(project, gold_set)`` if already read (a dashboard maps one
    state onto every level it shows). ``gain``: how quality enters the grades (the gold
    set's recorded rule, or the project's, when None; ``metrics.gain``)."""
    mapping = resolve_mapping(project, gold_set, mapping)
    sources = resolve_sources(project, sources) if gold_set is None else None
    state = state or label_state(project, gold_set)
    units = level_units(project, level)
    grades, query_pks, key = level_grades(state, units, mapping, gold_set, sources)
    rule = gain if gain is not None else default_gain(project, gold_set)
    if not rule.is_none:
        grades, key = gained(project, gold_set, rule, grades, key, sources)
    gold = Gold(
        grades,
        gold_set,
        project.relevance_threshold,
        origin=key,
        state=state,
        sources=sources,
        gain=rule,
        gain_asked=gain is not None,
        project=project,
    )
    gold.__dict__["query_pks"] = query_pks  # the cached_property, already known
    return gold


def own_level(run: Run) -> str:
    """The level of a run's own units: its chunking's name, or documents."""
    return run.chunking.name if run.chunking_id else DOCUMENTS


@dataclass(frozen=True)
class EvaluationSetting:
    """What runs are measured against: gold grades at a level, a cutoff k and the measures.

    At level ``own`` each run is measured at its own level (``gold_for``); ``gold`` is then
    the document-level gold, which names the gold source and the judged queries.
    """

    gold: Gold
    k: int
    mapping: MappingPolicy
    measures: list[tuple[str, str]]  # (engine name, column label), as ``dashboard_measures``
    own: bool = False
    charts: tuple[str, ...] = ()  # the measures the chart draws (engine names)
    templates: tuple[str, ...] = tuple(DEFAULT_MEASURES)  # the measures as chosen
    project: Project | None = None
    _golds: dict = field(default_factory=dict, compare=False, repr=False)
    _state: LabelState | None = field(default=None, compare=False, repr=False)

    @property
    def level(self) -> str:
        return OWN if self.own else self.gold.units.level

    @property
    def names(self) -> list[str]:
        return [name for name, _label in self.measures]

    @property
    def judged(self) -> str:
        return f"Judged@{self.k}"

    @property
    def sources(self) -> Sources | None:
        return self.gold.sources

    @property
    def source_names(self) -> list[str]:
        return self.gold.source_names

    @property
    def query_string(self) -> str:
        """The setting as URL parameters (what ``DashboardForm`` reads back)."""
        gold_set = self.gold.gold_set
        live = gold_set is None and self.gold.sources is not None
        sources = {"sources": self.gold.sources.text} if live else {}
        # The gain rule only once quality enters the numbers, so links stay as they were.
        asked = self.gold.gain_asked or not self.gold.gain.is_none
        gain = {"gain": str(self.gold.gain)} if asked else {}
        return urlencode(
            {
                **sources,
                **gain,
                "gold": gold_set.pk if gold_set else "live",
                "level": self.level,
                "k": self.k,
                "mapping": str(self.mapping),
                "measure": list(self.templates),
                "chart": list(self.chart_names),
            },
            doseq=True,
        )

    @property
    def chart_names(self) -> list[str]:
        """The measures the chart draws: the chosen ones, else nDCG@k (or the first)."""
        if self.charts:
            return list(self.charts)
        return [self.measure("")[0]]

    def can_evaluate(self, run: Run) -> bool:
        return self.own or can_evaluate(run, self.level)

    def gold_for(self, run: Run) -> Gold:
        """The gold a run is measured against: at its own level when ``own``."""
        if not self.own:
            return self.gold
        level = own_level(run)
        if level == self.gold.units.level:
            return self.gold
        if level not in self._golds:
            self._golds[level] = load_gold(
                self.project,
                level,
                gold_set=self.gold.gold_set,
                mapping=self.mapping,
                state=self._state,
                sources=self.gold.sources,
                gain=self.gold.gain,
            )
        return self._golds[level]

    def for_run(self, run: Run) -> EvaluationSetting:
        """This setting at one run's level (itself unless ``own``)."""
        if not self.own:
            return self
        return replace(self, gold=self.gold_for(run), own=False, _golds={})

    def measure(self, requested: str) -> tuple[str, str]:
        """(engine name, label) of a measure named either way; nDCG@k (or the first)
        otherwise."""
        for name, label in self.measures:
            if requested in (name, label):
                return name, label
        fallback = f"nDCG@{self.k}"
        return next((m for m in self.measures if m[0] == fallback), self.measures[0])


def evaluation_setting(
    project: Project,
    *,
    level: str,
    k: int = 10,
    gold_set: GoldSet | None = None,
    mapping: MappingPolicy | None = None,
    measures: list[str] | None = None,
    charts: list[str] | None = None,
    sources=None,
    gain: GainRule | None = None,
) -> EvaluationSetting:
    """The setting of the dashboards and the API: gold grades loaded at ``level`` (at
    documents for ``own``, the other levels' grades as runs need them) from the labels
    of ``sources`` (``annotator.sources``; ``people,assessors`` by default) or a frozen
    gold set."""
    mapping = resolve_mapping(project, gold_set, mapping)
    own = level == OWN
    templates = tuple(measures or DEFAULT_MEASURES)
    state = label_state(project, gold_set)
    gold = load_gold(
        project,
        DOCUMENTS if own else level,
        gold_set=gold_set,
        mapping=mapping,
        state=state,
        sources=sources,
        gain=gain,
    )
    return EvaluationSetting(
        gold,
        k,
        mapping,
        dashboard_measures(k, templates),
        own=own,
        project=project,
        charts=tuple(charts or ()),
        templates=templates,
        _state=state,
    )


def default_level(project: Project) -> str:
    """``own`` when the project's active runs span several chunkings, else documents."""
    chunkings = (
        Run.objects.filter(project=project, chunking__isnull=False, archived_at__isnull=True)
        .values("chunking")
        .distinct()
        .count()
    )
    return OWN if chunkings > 1 else DOCUMENTS


def document_label_share(
    project: Project,
    gold_set: GoldSet | None,
    *,
    state: LabelState | None = None,
    documents: Units | None = None,
    sources: Sources | None = None,
) -> float | None:
    """Share of the relevant labels (grade > 0) behind the gold that span whole documents
    (a live gold counts the annotators' labels, a frozen one every label it holds); None
    without relevant labels. At chunk or page level each such label makes every unit of
    its document relevant. ``state`` and ``documents`` (the documents level's units), when
    given, are those already read."""
    state = state or label_state(project, gold_set)
    if gold_set is None:
        sources = resolve_sources(project, sources)
    labels = counted_labels(state, sources)
    documents = documents or level_units(project, DOCUMENTS)
    counted = labels.grade > 0
    if gold_set is None:
        counted &= labels.source >= 0  # adjudications are not labels of the live gold
    total = int(counted.sum())
    if not total:
        return None
    position, known = lookup(documents.pk, labels.document[counted])  # units sorted by pk
    whole = known & (labels.start[counted] == 0) & (labels.end[counted] == documents.end[position])
    return int(whole.sum()) / total


def coarse_label_warning(setting: EvaluationSetting, runs: list[Run]) -> float | None:
    """The whole-document label share when it exceeds ``DOCUMENT_LABEL_WARNING`` and some
    figure is at chunk or page level; else None."""
    finer = any(run.chunking_id for run in runs) if setting.own else setting.level != DOCUMENTS
    if not finer or setting.project is None:
        return None
    gold = setting.gold
    share = document_label_share(
        setting.project,
        gold.gold_set,
        state=setting._state,
        documents=gold.units if gold.units.level == DOCUMENTS else None,
        sources=gold.sources,
    )
    return share if share is not None and share > DOCUMENT_LABEL_WARNING else None


@dataclass
class RunScores:
    run: Run
    gold: Gold
    values: dict[str, np.ndarray]  # per gold query, keyed by measure name

    def mean(self, measure: str) -> float:
        values = self.values[measure]
        return float(values.mean()) if values.size else 0.0

    @cached_property
    def intervals(self) -> dict[str, tuple[float, float]]:
        """95 % bootstrap intervals of every measure's mean, from one set of resamples."""
        names = list(self.values)
        matrix = np.array([self.values[n] for n in names])
        return score_cache.named_intervals(
            names, bootstrap_cis(matrix, n_resamples=DASHBOARD_RESAMPLES)
        )

    def interval(self, measure: str) -> tuple[float, float] | None:
        return self.intervals.get(measure)


def evaluate_run(run: Run, gold: Gold, measures: list[str]) -> RunScores:
    """The run's per-query values (and, from the per-process cache, their intervals):
    after label changes only the changed queries are evaluated again."""

    def evaluate(query_keys: np.ndarray) -> dict[str, np.ndarray]:
        grades = gold.grades
        rows = (
            np.isin(grades.query, query_keys) if query_keys is not gold.query_pks else slice(None)
        )
        return evaluate_index(
            indexed_run(run, gold),
            qrel_query=grades.query[rows],
            qrel_item=gold.code[grades.unit[rows]],
            qrel_grade=grades.grade[rows],
            query_keys=query_keys,
            measures=measures,
            rel_default=gold.threshold,
        )

    if gold.origin is None:
        return RunScores(run=run, gold=gold, values=evaluate(gold.query_pks))
    key = (*run_version(run), gold.origin, tuple(measures), gold.threshold)
    values, intervals = score_cache.run_values(
        key, gold.state, gold.query_pks, evaluate, n_resamples=DASHBOARD_RESAMPLES
    )
    scores = RunScores(run=run, gold=gold, values=values)
    scores.__dict__["intervals"] = intervals  # the cached_property, already known
    return scores


def measure_catalogue(setting: EvaluationSetting) -> list[dict]:
    """The picker's entries: catalogue and chosen measures, each with whether it is chosen."""
    chosen = list(setting.templates)
    entries = list(dict.fromkeys([*MEASURE_CATALOGUE, *chosen]))
    return [{"template": t, "chosen": t in chosen} for t in entries]


def measure_name(template: str, k: int) -> str:
    """A chosen measure at the dashboard's cutoff: ``nDCG@k`` → ``nDCG@10``."""
    return template[:-2] + f"@{k}" if template.endswith("@k") else template


def check_measures(templates: list[str], k: int) -> list[str]:
    """``templates`` (measures as chosen, ``nDCG@k`` or any name ``expand_measures`` reads)
    when there are at most ``MAX_MEASURES`` and each names measures at cutoff ``k``;
    ``ValueError`` saying what is wrong otherwise. Pages' forms and commands alike."""
    if len(templates) > MAX_MEASURES:
        raise ValueError(_("Choose at most %(n)d measures.") % {"n": MAX_MEASURES})
    for template in templates:
        expand_measures(measure_name(template, k))
    return templates


def dashboard_measures(k: int, templates=DEFAULT_MEASURES) -> list[tuple[str, str]]:
    """(engine name, column label) of the dashboard's measures at cutoff k: any name of
    either vocabulary (``nDCG@10``, ``ndcg_cut.10``, ``map``), one with several
    parameters standing for each (``P.5,10`` → ``P_5``, ``P_10``)."""
    names = list(dict.fromkeys(n for t in templates for n in expand_measures(measure_name(t, k))))
    return [(name, name) for name in names]
