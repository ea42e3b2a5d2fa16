"""Building gold-set exports: frozen labels → grades per unit of a level → file rows."""

from __future__ import annotations

import io
from collections import defaultdict

import numpy as np

from annotator.models import Document, Query
from numerics.mapping import MappingPolicy
from web.downloads import safe_filename

from .models import GoldSet
from .services import span_consensus
from .units import gold_unit_grades
from .writers import GoldExport, QueryGold, write_jsonl, write_qrels, write_xlsx

FORMATS = {
    "jsonl": ("application/x-ndjson; charset=utf-8", "jsonl"),
    "qrels": ("text/plain; charset=utf-8", "qrels"),
    "xlsx": ("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "xlsx"),
}


def build_export(gold_set: GoldSet, level: str, mapping: MappingPolicy | None = None) -> GoldExport:
    """One entry per query with judged units at ``level``; evidence spans with their
    consensus grade (≥ 1) and text, so the export stands on its own."""
    project = gold_set.project
    grades = gold_unit_grades(project, level, gold_set=gold_set, mapping=mapping)
    rel_maps: dict[int, dict[str, int]] = defaultdict(dict)
    for query_pk, unit, grade in zip(
        grades.query.tolist(), grades.unit.tolist(), grades.grade.tolist(), strict=True
    ):
        rel_maps[query_pk][str(grades.units.ids[unit])] = grade
    spans = span_consensus(gold_set)
    relevant = np.flatnonzero(spans.grade >= 1)
    documents = {
        d.pk: d
        for d in Document.objects.filter(pk__in=set(spans.document_pk[relevant].tolist())).only(
            "doc_id", "text", "page_starts"
        )
    }
    evidence: dict[int, list[dict]] = defaultdict(list)
    for index in relevant.tolist():
        document = documents[int(spans.document_pk[index])]
        start, end = int(spans.start[index]), int(spans.end[index])
        evidence[int(spans.query_pk[index])].append(
            {
                "doc_id": document.doc_id,
                "granularity": spans.granularity[index],
                "start": start,
                "end": end,
                "page": document.page_of(start),
                "grade": int(spans.grade[index]),
                "text": document.text[start:end] if spans.granularity[index] != "document" else "",
            }
        )
    queries = Query.objects.filter(pk__in=rel_maps.keys()).order_by("qid")
    return GoldExport(
        name=gold_set.name,
        version=gold_set.version,
        level=level,
        policy={**gold_set.policy, "mapping": grades.policy["mapping"], "level": level},
        threshold=project.relevance_threshold,
        queries=[
            QueryGold(
                qid=q.qid,
                query=q.text,
                gold_answer=q.reference_answer,
                rel_map=rel_maps[q.pk],
                evidence=evidence.get(q.pk, []),
            )
            for q in queries
        ],
    )


def render_export(export: GoldExport, fmt: str) -> bytes:
    if fmt == "xlsx":
        out = io.BytesIO()
        write_xlsx(export, out)
        return out.getvalue()
    text = io.StringIO()
    (write_jsonl if fmt == "jsonl" else write_qrels)(export, text)
    return text.getvalue().encode("utf-8")


def export_filename(export: GoldExport, fmt: str) -> str:
    return safe_filename(f"{export.name}-v{export.version}-{export.level}.{FORMATS[fmt][1]}")
