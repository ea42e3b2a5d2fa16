"""Quality in the gain: the evaluation setting's gain rule (``numerics.gain``) applied to
the gold grades, so every measure, export and chart reads the combined grades exactly as
it reads relevance grades.

The rule is the one the setting names, else a frozen gold set's recorded rule, else the
project's (``none`` until an owner chooses one). Live gold reads the quality grades of
the same label sources as the relevance grades; a frozen gold set reads the quality
grades frozen with it (``gold.services.freeze_gold_set``).
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

import numpy as np
from django.utils.translation import gettext as _

from annotator.models import Project
from annotator.revisions import revision
from annotator.sources import Sources
from gold.models import GoldSet
from gold.units import UnitGrades, Units
from numerics.gain import UNJUDGED, WEIGHT, GainRule
from quality.dimensions import check_gain_rule, project_gain_rule
from quality.grades import quality_by_document
from quality.models import QualityDimension

from .rankings import cache


def default_gain(project: Project, gold_set: GoldSet | None) -> GainRule:
    """A frozen gold set's recorded rule (``none`` when it records none), else the
    project's."""
    if gold_set is not None:
        return GainRule.parse(gold_set.policy.get("gain"))
    return project_gain_rule(project)


def check_rule(project: Project, text: str | None) -> GainRule | None:
    """The rule a parameter names, checked against the project's dimensions (None when
    empty); ``ValueError`` saying what is wrong."""
    if not (text or "").strip():
        return None
    return check_gain_rule(project, GainRule.parse(text))


def _live_quality(project: Project, key: str, documents: np.ndarray, sources) -> np.ndarray:
    """Each document's grade on dimension ``key`` (``UNJUDGED`` where none), kept per
    process under the project's label revision (every quality change moves it)."""
    dimension = QualityDimension.objects.filter(project=project, key=key).first()
    if dimension is None:
        return np.full(documents.size, UNJUDGED, dtype=np.int64)
    digest = hashlib.blake2b(documents.tobytes(), digest_size=8).hexdigest()
    cache_key = (
        "quality",
        project.pk,
        project.created_at,
        revision(project.pk).number,
        key,
        sources.key if sources is not None else None,
        digest,
    )
    return cache.get(cache_key, lambda: quality_by_document(dimension, documents, sources=sources))


def unit_quality(
    project: Project,
    gold_set: GoldSet | None,
    rule: GainRule,
    units: Units,
    sources: Sources | None,
) -> np.ndarray:
    """The quality grade on the rule's dimension of every unit's document, kept per
    process under the project's label revision and the units (a dashboard asks once per
    run: 20 runs re-derived it from 900,000 units on every view)."""
    key = (
        "unit_quality",
        project.pk,
        project.created_at,
        revision(project.pk).number,
        rule.dimension,
        gold_set.pk if gold_set is not None else None,
        sources.key if gold_set is None and sources is not None else None,
        units.fingerprint,
    )
    return cache.get(key, lambda: _unit_quality(project, gold_set, rule, units, sources))


def _unit_quality(project, gold_set, rule, units, sources) -> np.ndarray:
    documents, position = np.unique(units.document, return_inverse=True)
    if gold_set is not None:
        recorded = gold_set.policy.get("quality", {}).get(rule.dimension, {})
        grades = np.array(
            [recorded.get(str(int(pk)), UNJUDGED) for pk in documents], dtype=np.int64
        )
    else:
        grades = _live_quality(project, rule.dimension, documents, sources)
    return grades[position.ravel()] if documents.size else grades


def gained(
    project: Project,
    gold_set: GoldSet | None,
    rule: GainRule,
    grades: UnitGrades,
    key: tuple,
    sources: Sources | None,
) -> tuple[UnitGrades, tuple]:
    """(grades with the rule's gains, the cache key that follows both the relevance
    grades and the quality grades they read)."""
    quality = unit_quality(project, gold_set, rule, grades.units, sources)[grades.unit]
    gains = rule.apply(grades.grade, quality)
    digest = hashlib.blake2b(quality.tobytes(), digest_size=8).hexdigest()
    return replace(grades, grade=gains), (*key, "gain", str(rule), digest)


def describe(rule: GainRule, project: Project | None) -> str:
    """The rule in words in the active language, naming its dimension as screens do."""
    if rule.is_none:
        return str(_("relevance grades only"))
    dimension = (
        QualityDimension.objects.filter(project=project, key=rule.dimension).first()
        if project is not None
        else None
    )
    name = dimension.shown_name if dimension else rule.dimension
    if rule.kind == WEIGHT:
        return _("relevance × weight of %(name)s (weights %(weights)s)") % {
            "name": name,
            "weights": ", ".join(map(str, rule.weights)),
        }
    shown = dimension.label(rule.minimum) if dimension else str(rule.minimum)
    return _("relevance; non-relevant below %(name)s %(grade)s") % {"name": name, "grade": shown}


def quality_shares(run, gold, k: int, dimension: QualityDimension) -> dict[str, np.ndarray]:
    """Per gold query (``Gold.query_pks`` order): the share of the run's top ``k`` units
    whose source has each grade of ``dimension`` (keys "0".."m") and none (``unjudged``),
    dividing by the units in the top k as Judged@k does (all zero when nothing was
    retrieved). The grades are those the gold reads (live: its sources'; frozen: its own).
    The overall share of a grade is the mean over the queries."""
    from .coverage import top_keys  # it imports this app's evaluation
    from .rankings import lookup

    # The top k units per query from the run's index (its file, written after the
    # import): ranking 20 runs from their stored results took 4 s of a first render.
    row_query, keys = top_keys(run, gold.units, k)
    items = keys % max(len(gold.units.ids), 1)
    rule = GainRule(WEIGHT, dimension.key, tuple(range(dimension.max_grade + 1)))
    quality = unit_quality(dimension.project, gold.gold_set, rule, gold.units, gold.sources)
    grade = quality[items] if items.size else np.zeros(0, dtype=np.int64)
    position, known = lookup(gold.query_pks, row_query)
    n_queries = gold.query_pks.size
    index = position[known]
    grade = grade[known]
    n_top = np.bincount(index, minlength=n_queries).astype(float)

    def share(hit: np.ndarray) -> np.ndarray:
        count = np.bincount(index[hit], minlength=n_queries).astype(float)
        return np.divide(count, n_top, out=np.zeros(n_queries), where=n_top > 0)

    shares = {str(g): share(grade == g) for g in dimension.scale}
    shares["unjudged"] = share(grade == UNJUDGED)
    return shares
