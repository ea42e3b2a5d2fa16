"""Gold-set file formats: JSONL, TREC qrels and Excel. Pure writers over plain rows.

JSONL, one line per query:
    {"qid", "query", "gold_evidence": [unit ids with grade >= threshold, best first],
     "rel_map": {unit id: grade}, "gold_answer", "evidence": [{"doc_id", "granularity",
     "start", "end", "page", "grade", "relevant", "units", "text"}], …, "level", "policy"}
where … are the fields the set's parts add (``gold.parts``; the nuggets app adds
``"nuggets": [{"id", "text", "importance", "evidence": [{"doc_id", "start", "end"}]}]``).
``evidence`` and ``rel_map`` never disagree: each evidence entry's ``units`` are keys of
``rel_map`` holding exactly the entry's ``grade``, and every key of ``rel_map`` is among
the ``units`` of some entry (see ``gold.export.build_export``).
Under a gain rule (``numerics.gain``) lines gain ``"gain_map": {unit id: combined gain}``,
and a set that froze quality grades ``"quality": {dimension: {unit id: grade}}``.
TREC qrels: ``qid 0 unit_id grade`` per judged unit (grade 0 included: judged
non-relevant), sorted by qid then unit id, as trec_eval reads it; under a gain rule the
grade is the combined gain (the qrels the dashboard measures against).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO

from formats.trec import qrels_lines
from numerics.id_order import natural_key
from web.spreadsheets import append, header


@dataclass
class QueryGold:
    qid: str
    query: str
    gold_answer: str
    rel_map: dict[str, int]  # unit id -> consensus grade (judged units only)
    evidence: list[dict] = field(default_factory=list)
    # Fields parts of the gold set add to the query's line (``gold.parts``: nuggets …).
    extra: dict = field(default_factory=dict)
    # Under a gain rule other than none: unit id -> combined gain (``numerics.gain``),
    # what qrels files hold; None otherwise.
    gain_map: dict[str, int] | None = None
    # Each quality dimension's grade of the judged units (dimension key -> unit -> grade).
    quality: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def qrels_map(self) -> dict[str, int]:
        """What qrels files hold: the combined gains under a gain rule, else the grades."""
        return self.gain_map if self.gain_map is not None else self.rel_map


@dataclass
class GoldExport:
    name: str
    version: int
    level: str  # "documents", "pages" or a chunking's name
    policy: dict  # consensus policy + mapping policy, recorded with every export
    threshold: int
    queries: list[QueryGold]
    # The rows of the agreement sheet (header first), computed only when a file needs them.
    agreement: Callable[[], list[list]] | None = None
    # More sheets, (name, header, rows) each, from the gold set's parts (``gold.parts``).
    sheets: Callable[[], list[tuple[str, list, list[list]]]] | None = None

    def gold_evidence(self, query: QueryGold) -> list[str]:
        """Unit ids at or above the threshold, highest grade first, then id."""
        relevant = [(g, u) for u, g in query.rel_map.items() if g >= self.threshold]
        return [u for g, u in sorted(relevant, key=lambda t: (-t[0], t[1]))]


def write_jsonl(export: GoldExport, out: IO[str]) -> None:
    for query in export.queries:
        line = {
            "qid": query.qid,
            "query": query.query,
            "gold_evidence": export.gold_evidence(query),
            "rel_map": dict(sorted(query.rel_map.items())),
            "gold_answer": query.gold_answer,
            "evidence": query.evidence,
            **query.extra,
            **({"gain_map": dict(sorted(query.gain_map.items()))} if query.gain_map else {}),
            **({"quality": query.quality} if query.quality else {}),
            "level": export.level,
            "policy": export.policy,
        }
        out.write(json.dumps(line, ensure_ascii=False) + "\n")


def write_qrels(export: GoldExport, out: IO[str]) -> None:
    rows = (
        (query.qid, unit, grade)
        for query in export.queries
        for unit, grade in query.qrels_map.items()
    )
    out.writelines(f"{line}\n" for line in qrels_lines(rows))


def write_beir(export: GoldExport, out: IO[str]) -> None:
    """BEIR's qrels: a ``query-id corpus-id score`` header, then one tab-separated line
    per judged unit, in the order of ``write_qrels``."""
    out.write("query-id\tcorpus-id\tscore\n")
    for query in sorted(export.queries, key=lambda q: q.qid):
        for unit, grade in sorted(query.qrels_map.items()):
            out.write(f"{query.qid}\t{unit}\t{grade}\n")


def write_xlsx(export: GoldExport, out: IO[bytes]) -> None:
    """Sheets: about, queries, evidence, grades (one row per judged unit), agreement (the
    agreement of the set's annotators at the export's level). Queries in natural order
    (2 before 10), header rows frozen, columns sized."""
    from openpyxl import Workbook  # imported when needed: see web.spreadsheets

    book = Workbook(write_only=True)
    about = book.create_sheet("about")
    header(about, ["gold set", export.name], [22, 80])
    append(about, ["version", export.version])
    append(about, ["level", export.level])
    append(about, ["relevance threshold", export.threshold])
    append(about, ["sources", ", ".join(export.policy.get("sources") or [])])
    append(about, ["policy", json.dumps(export.policy, ensure_ascii=False)])
    ordered = sorted(export.queries, key=lambda q: natural_key(q.qid))
    queries = book.create_sheet("queries")
    header(
        queries,
        ["qid", "query", "gold_answer", "n_relevant", "gold_evidence"],
        [12, 60, 40, 11, 40],
    )
    for query in ordered:
        gold = export.gold_evidence(query)
        append(queries, [query.qid, query.query, query.gold_answer, len(gold), " ".join(gold)])
    evidence = book.create_sheet("evidence")
    header(
        evidence,
        [
            *("qid", "doc_id", "granularity", "start", "end", "page"),
            *("grade", "relevant", "units", "text"),
        ],
        [12, 18, 12, 9, 9, 7, 7, 9, 24, 80],
    )
    for query in ordered:
        for item in query.evidence:
            append(
                evidence,
                [
                    query.qid,
                    item["doc_id"],
                    item["granularity"],
                    item["start"],
                    item["end"],
                    item["page"],
                    item["grade"],
                    item["relevant"],
                    " ".join(item["units"]),
                    item["text"],
                ],
            )
    grades = book.create_sheet("grades")
    gained = any(q.gain_map is not None for q in ordered)
    header(grades, ["qid", "unit", "grade", *(["gain"] if gained else [])], [12, 24, 7, 7])
    for query in ordered:
        for unit, grade in sorted(query.rel_map.items(), key=lambda t: natural_key(t[0])):
            gain = [query.qrels_map.get(unit)] if gained else []
            append(grades, [query.qid, unit, grade, *gain])
    # One sheet per quality dimension: each judged unit's grade of its source.
    for key in sorted({k for q in ordered for k in q.quality}):
        sheet = book.create_sheet(f"quality {key}"[:31])
        header(sheet, ["unit", key], [24, 14])
        graded = {u: g for q in ordered for u, g in q.quality.get(key, {}).items()}
        for unit, grade in sorted(graded.items(), key=lambda t: natural_key(t[0])):
            append(sheet, [unit, grade])
    sheet = book.create_sheet("agreement")
    rows = export.agreement() if export.agreement is not None else []
    if rows:
        header(sheet, rows[0], [34, 14, 30, 30, 14, 14, 14])
        for row in rows[1:]:
            append(sheet, row)
    else:
        header(sheet, ["agreement not computed for this export"], [50])
    for name, columns, rows in export.sheets() if export.sheets is not None else ():
        sheet = book.create_sheet(name)
        header(sheet, columns, [14] * len(columns))
        for row in rows:
            append(sheet, row)
    book.save(out)
