"""Agreement of a project's annotators at a level: labels → items → coefficients.

Items are (query, unit) pairs of the chosen level; each annotator's grade of an item is
the max over their labels mapped onto that unit (``gold.units``). Pseudo-annotators
(imported assessors, LLM judges) are compared with the humans separately.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field

import numpy as np
from django.utils.translation import gettext_lazy as _

from annotator import kept_files
from annotator.caches import cache
from annotator.models import Judgment, Project, Query
from annotator.revisions import revision
from annotator.sources import ASSESSORS, JUDGES, PEOPLE, resolve_sources
from numerics import agreement as coefficients
from numerics.grades import GRADES
from numerics.id_order import natural_key
from numerics.mapping import MappingPolicy

from .agreement_items import agreement_items
from .policy import resolve_mapping
from .units import annotator_unit_grades, frozen_labels, level_units, units_for_level

KAPPA_BANDS = [  # Landis & Koch (1977)
    (0.8, _("almost perfect")),
    (0.6, _("substantial")),
    (0.4, _("moderate")),
    (0.2, _("fair")),
    (0.0, _("slight")),
    (-1.01, _("poor (worse than chance)")),
]
NOT_DEFINED = _("not defined")


def read_kappa(value: float | None) -> str:
    """The Landis & Koch reading of a kappa, in the user's language."""
    if value is None:
        return str(NOT_DEFINED)
    return str(next(label for bound, label in KAPPA_BANDS if value >= bound))


def read_alpha(value: float | None) -> str:
    """Krippendorff (2004): α ≥ .800 reliable; ≥ .667 tentative conclusions only."""
    if value is None:
        return str(NOT_DEFINED)
    if value >= 0.8:
        return str(_("reliable"))
    if value >= 0.667:
        return str(_("tentative conclusions only"))
    return str(_("unreliable"))


@dataclass
class AgreementReport:
    annotators: list[str]
    summary: dict
    per_query: list[dict]
    n_labels: int
    pseudo: list[dict]
    sources: list[str] = field(default_factory=list)  # whose labels the summary compares


def _items(project: Project, units, mapping: MappingPolicy, names: list[str], sources):
    items = agreement_items(project, units, mapping, names, sources)
    return items.annotators, items.query, items.unit, items.source, items.grade


def _report(annotators, query, unit, source, grade) -> tuple[dict, list[dict]]:
    """Summary and per-query rows (worst agreement first) of (query, unit) items."""
    key = query * (int(unit.max(initial=0)) + 1) + unit
    _distinct, item = np.unique(key, return_inverse=True)
    data = coefficients.labels(
        item,
        source,
        grade,
        len(GRADES),
        n_items=int(item.max(initial=-1)) + 1,
        n_annotators=len(annotators),
    )
    query_of_item = np.zeros(data.n_items, dtype=np.int64)
    query_of_item[item] = query
    query_pks, item_query = np.unique(query_of_item, return_inverse=True)
    report = coefficients.build_report(
        data,
        annotators=annotators,
        queries=query_pks.tolist(),
        item_query=item_query,
        domain_values=GRADES,
    )
    qids = dict(Query.objects.filter(pk__in=query_pks.tolist()).values_list("pk", "qid"))
    per_query = []
    for row in report.per_query:
        if row["n_items"]:
            pk, values = row["query"], {k: v for k, v in row.items() if k != "query"}
            per_query.append({"query_pk": pk, "qid": qids.get(pk), **values})
    per_query.sort(key=lambda r: (r["percent_agreement"], r["qid"]))
    return report.summary, per_query


def project_agreement(
    project: Project, level: str, mapping: MappingPolicy | None = None, sources=None
) -> AgreementReport:
    """Agreement of the annotators of ``sources`` (``annotator.sources``; the people by
    default) — and of each other pseudo-annotator with them — at a level, under
    ``mapping`` (the project's setting unless given)."""
    mapping = resolve_mapping(project, None, mapping)
    everyone = resolve_sources(project, (PEOPLE, ASSESSORS, JUDGES))
    sources = resolve_sources(project, sources or (PEOPLE,))
    members = project.memberships.select_related("user")
    humans = sorted(m.user.username for m in members if sources.counts(m.user.username))
    pseudo = sorted(
        m.user.username for m in members if m.is_pseudo and not sources.counts(m.user.username)
    )
    # Kept per process under the project's label revision (every label, adjudication and
    # judge label moves it) and the level's units: a page view recomputes nothing until
    # a label changes.
    units = level_units(project, level)
    now = revision(project.pk).number
    project_key = ("agreement", project.pk, project.created_at)
    key = (*project_key, now, level, units.fingerprint, str(mapping), sources.key, *humans, "|")
    key += tuple(pseudo)
    kept = cache.peek(key)
    if kept is not None:
        return kept.report
    # A new process reads the report a process kept at this revision (1–2 s of work at
    # 500,000 labels); any label change moves the revision, and the report is made again
    # from items brought up to date for the changed queries (``gold.agreement_items``).
    stem = kept_files.project_stem("agreement", project.pk, project.created_at)
    digest = hashlib.blake2b(repr(key).encode(), digest_size=12).hexdigest()
    path = kept_files.folder() / f"{stem}.{digest}.npy"
    report = _report_of(kept_files.read_json(path))
    if report is None:
        report = _project_agreement(project, units, mapping, sources, everyone, humans, pseudo)
        if kept_files.write_json(path, asdict(report)):
            kept_files.keep_latest(path, stem)
    cache.discard(lambda k: k[:3] == project_key and k[3] != now)  # older revisions
    cache.put(key, _Kept(report, _size(report)))
    return report


def _report_of(value) -> AgreementReport | None:
    """An ``AgreementReport`` from its kept JSON; None when it does not hold one."""
    if not isinstance(value, dict):
        return None
    try:
        return AgreementReport(**value)
    except TypeError:
        return None


@dataclass(frozen=True)
class _Kept:
    report: AgreementReport
    nbytes: int  # roughly: what the cache bounds by


def _size(report: AgreementReport) -> int:
    return 400 * (len(report.per_query) + len(report.summary.get("pairs", ())) + 10)


def _project_agreement(project, units, mapping, sources, everyone, humans, pseudo):
    annotators, query, unit, source, grade = _items(project, units, mapping, humans, sources)
    summary, per_query = _report(annotators, query, unit, source, grade)
    comparisons = []
    for name in pseudo:
        if not Judgment.objects.filter(query__project=project, annotator__username=name).exists():
            continue
        both = _items(project, units, mapping, [*humans, name], everyone)
        with_pseudo, _rows = _report(*both)
        comparisons.append(
            {
                "name": name,
                "alpha": with_pseudo["krippendorff_alpha"],
                "pairs": [p for p in with_pseudo["pairs"] if name in (p["a"], p["b"])],
            }
        )
    return AgreementReport(
        annotators, summary, per_query, int(source.size), comparisons, sources.names
    )


def gold_set_agreement(gold_set, level: str, mapping: MappingPolicy) -> AgreementReport:
    """Agreement of the annotators whose labels a frozen gold set holds (adjudications
    left out: they are the resolution, not a vote), at ``level`` under ``mapping``."""
    labels = frozen_labels(gold_set)
    labels = labels.take(labels.source >= 0)
    units = units_for_level(gold_set.project, level)
    query, unit, source, grade = annotator_unit_grades(labels, units, mapping)
    summary, per_query = _report(labels.annotators, query, unit, source, grade)
    return AgreementReport(labels.annotators, summary, per_query, int(source.size), [])


def agreement_rows(report: AgreementReport) -> list[list]:
    """The agreement as spreadsheet rows (header first): coefficients with their readings
    (κ and α rounded to 3 decimals, as on the page), every pair, every query."""
    s = report.summary
    fleiss = s["fleiss_kappa"]
    rows: list[list] = [
        ["coefficient", "value", "reading", "rests on"],
        ["items", s["n_items"], "", "(query, unit) pairs labelled by at least one annotator"],
        ["annotators", len(report.annotators), ", ".join(report.annotators), ""],
        ["percent agreement", _round(s["percent_agreement"]), "", "items with two or more labels"],
        [
            "Fleiss' kappa",
            _round(fleiss["value"]),
            read_kappa(fleiss["value"]),
            (
                "needs two or more annotators' labels on an item"
                if fleiss["m"] is None
                else f"{fleiss['n_items']} items with exactly {fleiss['m']} labels"
            ),
        ],
    ]
    for name, value in s["krippendorff_alpha"].items():
        rows.append([f"Krippendorff's alpha ({name})", _round(value), read_alpha(value), ""])
    rows += [[], ["pair", "n", "Cohen's kappa", "reading", "linear", "quadratic"]]
    for p in s["pairs"]:
        rows.append(
            [
                f"{p['a']} × {p['b']}",
                p["n"],
                _round(p["cohen_kappa"]),
                read_kappa(p["cohen_kappa"]),
                _round(p["cohen_kappa_linear"]),
                _round(p["cohen_kappa_quadratic"]),
            ]
        )
    rows += [[], ["qid", "percent agreement", "alpha nominal", "alpha ordinal", "items"]]
    for row in sorted(report.per_query, key=lambda r: natural_key(r["qid"] or "")):
        alpha = row["krippendorff_alpha"]
        rows.append(
            [
                row["qid"],
                _round(row["percent_agreement"]),
                _round(alpha.get("nominal")),
                _round(alpha.get("ordinal")),
                row["n_items"],
            ]
        )
    return rows


def _round(value: float | None) -> float | None:
    return None if value is None else round(float(value), 3)


def pair_matrix(annotators: list[str], pairs: list[dict]) -> list[list[dict]]:
    """Annotators × annotators cells of the heat map: each pair's kappa, heat class, reading."""
    by_pair = {(p["a"], p["b"]): p for p in pairs}

    def cell(a: str, b: str) -> dict:
        pair = (by_pair.get((a, b)) or by_pair.get((b, a))) if a != b else None
        kappa = pair["cohen_kappa"] if pair else None
        # Heat: red (κ ≤ 0) to green (κ = 1) in tenths, a class of assay.css each (the
        # Content-Security-Policy allows no inline style); grey where undefined.
        colour = f"heat-{round(10 * max(0.0, kappa))}" if kappa is not None else "heat-none"
        return {
            "a": a,
            "b": b,
            "pair": pair,
            "kappa": kappa,
            "colour": colour,
            "reading": read_kappa(kappa),
        }

    return [[cell(a, b) for b in annotators] for a in annotators]


def chosen_pair(pairs: list[dict], a: str | None, b: str | None) -> dict | None:
    """The pair of annotators ``a`` and ``b`` (either order), if both are named and paired."""
    if not a or not b:
        return None
    return next((p for p in pairs if {p["a"], p["b"]} == {a, b}), None)


SHADES = 5  # buckets of the confusion matrix's shading (classes shade-0 … shade-5)


def confusion_table(pair: dict) -> dict:
    """A pair's confusion matrix as the page shows it: each cell with a shading class by
    its share of the largest cell (the Content-Security-Policy allows no inline style),
    the diagonal marked, and row, column and grand totals."""
    counts = np.asarray(pair["confusion"], dtype=np.int64)
    peak = int(counts.max(initial=0))
    shade = np.zeros_like(counts) if peak == 0 else np.ceil(SHADES * counts / peak).astype(int)
    rows = [
        {
            "grade": i,
            "cells": [
                {"value": int(v), "shade": f"shade-{int(b)}", "diagonal": i == j}
                for j, (v, b) in enumerate(zip(row, shade_row, strict=True))
            ],
            "total": int(row.sum()),
        }
        for i, (row, shade_row) in enumerate(zip(counts, shade, strict=True))
    ]
    return {
        "rows": rows,
        "column_totals": [int(v) for v in counts.sum(axis=0)],
        "total": int(counts.sum()),
    }
