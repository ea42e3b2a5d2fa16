"""Building gold-set exports: frozen labels → grades per unit of a level → file rows."""

from __future__ import annotations

import io
from collections import defaultdict

import numpy as np

from annotator.models import Document, Query
from numerics.gain import UNJUDGED, GainRule
from numerics.id_order import natural_key
from numerics.mapping import MappingPolicy, map_pairs
from numerics.spans import SpanArrays
from web.downloads import safe_filename

from .agreement import agreement_rows, gold_set_agreement
from .models import GoldSet
from .parts import parts
from .policy import recorded_sources, resolve_mapping
from .units import (
    LabelRows,
    Units,
    consensus_of,
    frozen_labels,
    same_span_units,
    unit_grades,
    units_for_level,
)
from .writers import GoldExport, QueryGold, write_beir, write_jsonl, write_qrels, write_xlsx

FORMATS = {
    "jsonl": ("application/x-ndjson; charset=utf-8", "jsonl"),
    "qrels": ("text/plain; charset=utf-8", "qrels"),
    "beir": ("text/tab-separated-values; charset=utf-8", "tsv"),
    "xlsx": ("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "xlsx"),
}


def supporting_pairs(labels: LabelRows, units: Units, mapping: MappingPolicy):
    """(label row, unit) pairs where a label reaches a unit: annotators' labels through
    the mapping, adjudications on the unit with their very span (``gold.units``)."""
    own = np.flatnonzero(labels.source >= 0)
    label, unit = map_pairs(
        SpanArrays(labels.document[own], labels.start[own], labels.end[own]),
        SpanArrays(units.document, units.start, units.end),
        policy=mapping,
    )
    label = own[label]
    extra, reached = same_span_units(labels, np.flatnonzero(labels.source < 0), units)
    return np.concatenate([label, extra]), np.concatenate([unit, reached])


def build_export(gold_set: GoldSet, level: str, mapping: MappingPolicy | None = None) -> GoldExport:
    """One entry per query with judged units at ``level``.

    ``rel_map`` holds each judged unit's consensus grade; ``evidence`` the labelled spans
    that support those grades: a span is listed, with the units it grades, when it reaches
    a unit whose final grade is its own grade. So every ``units`` entry of the evidence
    is in ``rel_map`` with exactly that evidence's grade, and every unit of ``rel_map`` is
    supported by at least one evidence entry (grade-0 evidence too, marked not relevant).
    """
    project = gold_set.project
    mapping = resolve_mapping(project, gold_set, mapping)
    units = units_for_level(project, level)
    labels = frozen_labels(gold_set)
    grades = unit_grades(labels, units, consensus=consensus_of(gold_set.policy), mapping=mapping)
    final: dict[tuple[int, int], int] = {}
    rel_maps: dict[int, dict[str, int]] = defaultdict(dict)
    for query_pk, unit, grade in zip(
        grades.query.tolist(), grades.unit.tolist(), grades.grade.tolist(), strict=True
    ):
        final[query_pk, unit] = grade
        rel_maps[query_pk][str(units.ids[unit])] = grade
    granularity = list(gold_set.labels.order_by("id").values_list("granularity", flat=True))
    supported: dict[tuple, list[str]] = defaultdict(list)
    rows, reached = supporting_pairs(labels, units, mapping)
    for row, unit in zip(rows.tolist(), reached.tolist(), strict=True):
        query_pk, grade = int(labels.query[row]), int(labels.grade[row])
        if final.get((query_pk, unit)) != grade:
            continue
        key = (
            query_pk,
            int(labels.document[row]),
            int(labels.start[row]),
            int(labels.end[row]),
            granularity[row],
            grade,
        )
        unit_id = str(units.ids[unit])
        if unit_id not in supported[key]:
            supported[key].append(unit_id)
    documents = {
        d.pk: d
        for d in Document.objects.filter(pk__in={k[1] for k in supported}).only(
            "doc_id", "text", "page_starts"
        )
    }
    evidence: dict[int, list[dict]] = defaultdict(list)
    for key in sorted(supported, key=lambda k: (k[0], documents[k[1]].doc_id, k[2], k[3], k[4])):
        query_pk, document_pk, start, end, kind, grade = key
        document = documents[document_pk]
        evidence[query_pk].append(
            {
                "doc_id": document.doc_id,
                "granularity": kind,
                "start": start,
                "end": end,
                "page": document.page_of(start),
                "grade": grade,
                "relevant": grade >= project.relevance_threshold,
                "units": sorted(supported[key]),
                "text": document.text[start:end] if kind != "document" else "",
            }
        )
    gain_maps, quality = _quality_maps(gold_set, grades, units)
    # Queries with labels, and those a part froze something for (answer judgements …).
    wanted = set(rel_maps).union(*(p.queries(gold_set) for p in parts() if p.queries))
    queries = sorted(
        Query.objects.filter(project=project, pk__in=wanted), key=lambda q: natural_key(q.qid)
    )
    extra: dict[int, dict] = defaultdict(dict)
    for part in parts():  # fields the set's parts add to each line (nuggets …)
        for query_pk, fields in part.fields(gold_set, [q.pk for q in queries]).items():
            extra[query_pk].update(fields)
    return GoldExport(
        name=gold_set.name,
        version=gold_set.version,
        level=level,
        policy={
            **gold_set.policy,
            "sources": recorded_sources(gold_set),
            "mapping": str(mapping),
            "level": level,
        },
        threshold=project.relevance_threshold,
        queries=[
            QueryGold(
                qid=q.qid,
                query=q.text,
                gold_answer=q.reference_answer,
                rel_map=rel_maps.get(q.pk, {}),
                evidence=evidence.get(q.pk, []),
                extra=extra.get(q.pk, {}),
                gain_map=gain_maps.get(q.pk, {}) if gain_maps is not None else None,
                quality=quality.get(q.pk, {}),
            )
            for q in queries
        ],
        agreement=lambda: agreement_rows(gold_set_agreement(gold_set, level, mapping)),
        sheets=lambda: [sheet for part in parts() for sheet in part.workbook_sheets(gold_set)],
    )


def _quality_maps(gold_set: GoldSet, grades, units: Units):
    """(combined gains per query and unit id, or None without a gain rule; each frozen
    quality dimension's grade per query and unit id) of a gold set's grades."""
    recorded = gold_set.policy.get("quality") or {}
    rule = GainRule.parse(gold_set.policy.get("gain"))
    documents = units.document[grades.unit]
    ids = units.ids[grades.unit]
    quality: dict[int, dict[str, dict[str, int]]] = defaultdict(dict)
    for key, by_document in recorded.items():
        for query_pk, unit_id, document in zip(
            grades.query.tolist(), ids.tolist(), documents.tolist(), strict=True
        ):
            found = by_document.get(str(document))
            if found is not None:
                quality[query_pk].setdefault(key, {})[str(unit_id)] = found
    if rule.is_none:
        return None, quality
    by_document = recorded.get(rule.dimension, {})
    values = np.array([by_document.get(str(d), UNJUDGED) for d in documents.tolist()])
    gains = rule.apply(grades.grade, values.astype(np.int64))
    gain_maps: dict[int, dict[str, int]] = defaultdict(dict)
    for query_pk, unit_id, gain in zip(
        grades.query.tolist(), ids.tolist(), gains.tolist(), strict=True
    ):
        gain_maps[query_pk][str(unit_id)] = gain
    return gain_maps, quality


def render_export(export: GoldExport, fmt: str) -> bytes:
    if fmt == "xlsx":
        out = io.BytesIO()
        write_xlsx(export, out)
        return out.getvalue()
    text = io.StringIO()
    {"jsonl": write_jsonl, "qrels": write_qrels, "beir": write_beir}[fmt](export, text)
    return text.getvalue().encode("utf-8")


def export_filename(export: GoldExport, fmt: str) -> str:
    return safe_filename(f"{export.name}-v{export.version}-{export.level}.{FORMATS[fmt][1]}")
