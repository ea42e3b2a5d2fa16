"""Calibration: two label sources on the pairs both graded, at the level they were graded.

A *pair* is one (query, evidence) both sides labelled with the very same span and
granularity — a chunk both graded, a page, a whole document, a passage with the same
characters — so nothing is mapped: no label reaches a neighbour it did not grade. A side
is a set of label sources (``annotator.sources``: ``people``, ``assessors``,
``judge:<slug>@<n>`` …) or one annotator by username (person against person); when
several of its annotators graded a pair, their majority grade is the side's. Labels given
while a judge's suggestion was on screen are left out: they would flatter the judge.

On those pairs: exact agreement, Cohen's κ unweighted, linear and quadratic, Krippendorff's
α (ordinal) with bootstrap intervals (``numerics.agreement.compare_raters``), the
confusion matrix, per-query agreement, and the pairs themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from django.utils.translation import gettext as _

from annotator.caches import cache
from annotator.models import Granularity, Judgment, Membership, Project, Query
from annotator.revisions import revision
from annotator.sources import Sources, SourcesError, resolve_sources
from numerics.agreement import compare_raters
from numerics.consensus import consensus_grades
from numerics.gain import majority
from numerics.grades import N_GRADES
from numerics.significance import bootstrap_ci
from quality.models import QualityDimension, QualityGrade

RESAMPLES = 1000
PAIRS_SHOWN = 500


def raters(project: Project) -> list[str]:
    """Pseudo-annotators with labels in the project: judge versions and imported ones."""
    return sorted(
        project.memberships.filter(is_pseudo=True, user__judgments__query__project=project)
        .values_list("user__username", flat=True)
        .distinct()
    )


@dataclass(frozen=True)
class Side:
    """One side of a calibration: label sources, or one annotator."""

    text: str
    sources: Sources | None = None
    username: str | None = None

    def judgments(self, project: Project):
        labels = Judgment.objects.filter(query__project=project, suggestion_shown=False)
        if self.username is not None:
            return labels.filter(annotator__username=self.username)
        return self.sources.judgments(labels)


def side(project: Project, text: str) -> Side:
    """A side named by sources (``people``, ``judge:x@2`` …) or by an annotator's
    username; ``SourcesError`` when it is neither."""
    text = (text or "").strip()
    if Membership.objects.filter(project=project, user__username=text).exists():
        return Side(text, username=text)
    return Side(text, sources=resolve_sources(project, text))


@dataclass
class Calibration:
    a: str
    b: str
    n_a: int  # spans the side graded
    n_b: int
    agreement: dict
    per_query: list[dict]
    pairs: list[dict] = field(default_factory=list)


def _side_grades(project: Project, chosen: Side) -> dict[tuple, int]:
    """(query pk, granularity, document pk, start, end) → the side's grade there."""
    rows = list(
        chosen.judgments(project).values_list(
            "query_id", "granularity", "document_id", "start", "end", "grade"
        )
    )
    keys: dict[tuple, int] = {}
    span = np.array([keys.setdefault(tuple(r[:5]), len(keys)) for r in rows], dtype=np.int64)
    grade = np.array([r[5] for r in rows], dtype=np.int64)
    final, _n = consensus_grades(span, grade, len(keys), "majority", 1)
    return {key: int(final[index]) for key, index in keys.items() if final[index] >= 0}


@dataclass(frozen=True)
class _Compared:
    """What the labels alone decide of a calibration (no qid or doc id: those may be
    renamed without a label change)."""

    n_a: int
    n_b: int
    shared: list[tuple]  # the pairs' keys, sorted
    grades_a: list[int]  # the sides' grades of the shared pairs
    grades_b: list[int]
    agreement: dict
    per_query: list[tuple[int, dict]]  # (query pk, its figures), by query pk

    @property
    def nbytes(self) -> int:  # roughly: what the cache bounds by
        return 200 * (len(self.shared) + len(self.per_query)) + 4096


def _side_key(chosen: Side) -> tuple:
    return ("user", chosen.username) if chosen.username is not None else chosen.sources.key


def _compared(project: Project, first: Side, second: Side) -> _Compared:
    """The two sides' pairs and figures, kept per process under the project's label
    revision (every label change moves it) and the sides' labels: a page view reads and
    recomputes nothing until a label changes."""
    now = revision(project.pk).number
    project_key = ("calibration", project.pk, project.created_at)
    key = (*project_key, now, _side_key(first), _side_key(second))
    kept = cache.peek(key)
    if kept is not None:
        return kept
    grades_a, grades_b = _side_grades(project, first), _side_grades(project, second)
    shared = sorted(set(grades_a) & set(grades_b))
    x = np.array([grades_a[k] for k in shared], dtype=np.int64)
    y = np.array([grades_b[k] for k in shared], dtype=np.int64)
    agreement = compare_raters(x, y, N_GRADES, n_resamples=RESAMPLES)
    query_pks = sorted({k[0] for k in shared})
    item_query = np.array([k[0] for k in shared], dtype=np.int64)
    per_query = []
    for pk in query_pks:
        mask = item_query == pk
        match = (x[mask] == y[mask]).astype(float)
        per_query.append(
            (
                pk,
                {
                    "n": int(mask.sum()),
                    "exact_agreement": float(match.mean()),
                    "interval": bootstrap_ci(match, n_resamples=RESAMPLES),
                    "mean_difference": float((y[mask] - x[mask]).mean()),
                },
            )
        )
    kept = _Compared(
        len(grades_a), len(grades_b), shared, x.tolist(), y.tolist(), agreement, per_query
    )
    cache.discard(lambda k: k[:3] == project_key and k[3] != now)  # older revisions
    cache.put(key, kept)
    return kept


def calibrate(project: Project, a: str, b: str) -> Calibration:
    """Side ``a`` against side ``b`` on the spans both graded (``SourcesError`` for a
    side that names nothing of the project)."""
    first, second = side(project, a), side(project, b)
    if first.text == second.text:
        raise SourcesError(_("Choose two different sides."))
    compared = _compared(project, first, second)
    shared = compared.shared
    qids = dict(
        Query.objects.filter(pk__in=[pk for pk, _figures in compared.per_query]).values_list(
            "pk", "qid"
        )
    )
    per_query = [{"qid": qids[pk], **figures} for pk, figures in compared.per_query]
    per_query.sort(key=lambda r: (r["exact_agreement"], r["qid"]))
    documents = dict(
        project.documents.filter(pk__in={k[2] for k in shared[:PAIRS_SHOWN]}).values_list(
            "pk", "doc_id"
        )
    )
    pairs = [
        {
            "qid": qids[q],
            "granularity": granularity,
            "granularity_label": Granularity(granularity).label,
            "doc_id": documents.get(d, ""),
            "start": s,
            "end": e,
            "a": a_grade,
            "b": b_grade,
        }
        for key, a_grade, b_grade in zip(
            shared[:PAIRS_SHOWN],
            compared.grades_a[:PAIRS_SHOWN],
            compared.grades_b[:PAIRS_SHOWN],
            strict=True,
        )
        for q, granularity, d, s, e in [key]
    ]
    return Calibration(
        first.text,
        second.text,
        compared.n_a,
        compared.n_b,
        compared.agreement,
        per_query,
        pairs,
    )


@dataclass
class QualityCalibration:
    """Two sides' grades of a quality dimension on the units (documents or sites) both
    graded: ``agreement`` as ``compare_raters`` gives it over the dimension's scale."""

    dimension: QualityDimension
    a: str
    b: str
    n_a: int
    n_b: int
    agreement: dict
    pairs: list[dict] = field(default_factory=list)


def _side_quality(dimension: QualityDimension, chosen: Side) -> dict[tuple, int]:
    """(document pk or 0, site) → the side's grade of that unit (its majority)."""
    grades = QualityGrade.objects.filter(dimension=dimension)
    if chosen.username is not None:
        grades = grades.filter(annotator__username=chosen.username)
    else:
        grades = chosen.sources.judgments(grades)
    rows = list(grades.values_list("document_id", "site", "grade"))
    keys: dict[tuple, int] = {}
    unit = np.array([keys.setdefault((r[0] or 0, r[1]), len(keys)) for r in rows], dtype=np.int64)
    grade = np.array([r[2] for r in rows], dtype=np.int64)
    final = majority(unit, grade, len(keys))  # any scale; a tie goes to the higher
    return {key: int(final[index]) for key, index in keys.items() if final[index] >= 0}


def calibrate_quality(project: Project, dimension: QualityDimension, a: str, b: str):
    """Side ``a`` against side ``b`` on the units of ``dimension`` both graded: exact
    agreement, Cohen's κ unweighted, linear and quadratic, Krippendorff's α (ordinal) and
    the confusion matrix over the dimension's grades 0..max (``SourcesError`` for a side
    that names nothing of the project)."""
    first, second = side(project, a), side(project, b)
    if first.text == second.text:
        raise SourcesError(_("Choose two different sides."))
    grades_a, grades_b = _side_quality(dimension, first), _side_quality(dimension, second)
    shared = sorted(set(grades_a) & set(grades_b))
    x = np.array([grades_a[k] for k in shared], dtype=np.int64)
    y = np.array([grades_b[k] for k in shared], dtype=np.int64)
    agreement = compare_raters(x, y, dimension.max_grade + 1, n_resamples=RESAMPLES)
    documents = dict(
        project.documents.filter(pk__in={k[0] for k in shared[:PAIRS_SHOWN] if k[0]}).values_list(
            "pk", "doc_id"
        )
    )
    pairs = [
        {"source": documents.get(pk, "") if pk else site, "a": grades_a[k], "b": grades_b[k]}
        for k in shared[:PAIRS_SHOWN]
        for pk, site in [k]
    ]
    return QualityCalibration(
        dimension, first.text, second.text, len(grades_a), len(grades_b), agreement, pairs
    )
