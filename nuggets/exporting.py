"""Exporting nuggets, live or as a gold set froze them: JSONL, CSV, XLSX (the import's own
fields, so an export imports again unchanged) and ndeval's subtopic qrels.

JSONL, one nugget a line: ``{"qid", "nugget_id", "text", "importance", "evidence":
[{"doc_id", "start", "end", "text"}]}``, plus ``"units"`` (the ids of the units covering
the nugget at ``level`` under the mapping) when a level is asked for. CSV and XLSX: one
row per span, ``qid, nugget_id, text, importance, doc_id, start, end, evidence_text``.
ndeval (``qid subtopic docid rel``, as ndeval and ir_measures' pyndeval provider read
diversity qrels): one line per covering (nugget, unit) pair at the level, rel 2 for a
vital nugget and 1 for an okay one, so relevance level 1 counts every nugget and level 2
the vital ones. Queries in natural order (2 before 10), nuggets in their order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from annotator.models import Document, Project, Query
from formats.values import as_token
from gold.models import GoldSet
from gold.policy import resolve_mapping
from gold.units import units_for_level
from numerics.id_order import natural_key
from numerics.mapping import MappingPolicy
from web.spreadsheets import csv_text, xlsx_bytes

from .coverage import coverage
from .sources import NuggetRows, nugget_rows

FORMATS = ("jsonl", "csv", "xlsx", "ndeval")
TABLE_HEADER = [
    "qid",
    "nugget_id",
    "text",
    "importance",
    "doc_id",
    "start",
    "end",
    "evidence_text",
]
CONTENT_TYPES = {
    "jsonl": "application/x-ndjson; charset=utf-8",
    "csv": "text/csv; charset=utf-8",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "ndeval": "text/plain; charset=utf-8",
}


@dataclass(frozen=True)
class NuggetExport:
    """The nuggets to write, one dict per nugget in file order; ``level`` and ``policy``
    when units were mapped."""

    nuggets: list[dict]
    source: str
    level: str | None = None
    policy: str | None = None


def build_nugget_export(
    project: Project,
    *,
    gold_set: GoldSet | None = None,
    level: str | None = None,
    mapping: MappingPolicy | None = None,
    rows: NuggetRows | None = None,
) -> NuggetExport:
    """The nuggets of the live project or of ``gold_set``, each with its evidence (and its
    covering units at ``level`` under ``mapping``, the project's by default)."""
    rows = rows if rows is not None else nugget_rows(project, gold_set)
    qids = dict(Query.objects.filter(pk__in=rows.query_pks.tolist()).values_list("pk", "qid"))
    texts = dict(
        Document.objects.filter(pk__in=set(rows.ev_document.tolist())).values_list("pk", "doc_id")
    )
    bodies = {
        pk: text
        for pk, text in Document.objects.filter(pk__in=list(texts))
        .values_list("pk", "text")
        .iterator()
    }
    covered = None
    if level is not None:
        mapping = resolve_mapping(project, gold_set, mapping)
        covered = coverage(rows, units_for_level(project, level), mapping)
    evidence: dict[int, list[dict]] = {}
    for index, document, start, end in zip(
        rows.ev_nugget.tolist(),
        rows.ev_document.tolist(),
        rows.ev_start.tolist(),
        rows.ev_end.tolist(),
        strict=True,
    ):
        evidence.setdefault(index, []).append(
            {
                "doc_id": texts[document],
                "start": start,
                "end": end,
                "text": bodies[document][start:end],
            }
        )
    nuggets = []
    for index in range(len(rows)):
        entry = {
            "qid": qids[int(rows.query[index])],
            "nugget_id": rows.nugget_id[index],
            "text": rows.text[index],
            "importance": "vital" if rows.vital[index] else "okay",
            "evidence": sorted(
                evidence.get(index, []), key=lambda e: (e["doc_id"], e["start"], e["end"])
            ),
        }
        if covered is not None:
            entry["units"] = covered.units_of(index)
        nuggets.append((natural_key(entry["qid"]), index, entry))
    nuggets.sort(key=lambda t: (t[0], t[1]))
    return NuggetExport(
        [entry for _key, _index, entry in nuggets],
        rows.source,
        level,
        str(mapping) if covered is not None else None,
    )


def write_jsonl(export: NuggetExport) -> str:
    return "".join(json.dumps(n, ensure_ascii=False) + "\n" for n in export.nuggets)


def table_rows(export: NuggetExport) -> list[list]:
    """One row per evidence span (one row, span columns empty, for a nugget without)."""
    rows = []
    for n in export.nuggets:
        head = [n["qid"], n["nugget_id"], n["text"], n["importance"]]
        if not n["evidence"]:
            rows.append([*head, "", "", "", ""])
        for e in n["evidence"]:
            rows.append([*head, e["doc_id"], e["start"], e["end"], e["text"]])
    return rows


def write_csv(export: NuggetExport) -> str:
    """Text starting like a formula (=, +, -, @) is written after an apostrophe, so that a
    spreadsheet shows it as text; the import drops that apostrophe again."""
    return csv_text(TABLE_HEADER, table_rows(export))


def write_ndeval(export: NuggetExport) -> str:
    """``qid nugget_id unit_id rel`` per covering pair (needs an export with units)."""
    if export.level is None:
        raise ValueError("ndeval qrels need a level: the units that cover each nugget")
    lines = []
    for n in export.nuggets:
        rel = 2 if n["importance"] == "vital" else 1
        # Ids are single tokens; one kept from before that rule is written as a token.
        lines += [f"{n['qid']} {n['nugget_id']} {as_token(unit)} {rel}\n" for unit in n["units"]]
    return "".join(lines)


def render(export: NuggetExport, fmt: str) -> bytes:
    if fmt == "xlsx":
        return xlsx_bytes({"nuggets": (TABLE_HEADER, table_rows(export))})
    if fmt == "csv":
        return write_csv(export).encode("utf-8")
    if fmt == "ndeval":
        return write_ndeval(export).encode("utf-8")
    return write_jsonl(export).encode("utf-8")
