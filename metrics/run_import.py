"""Importing retrieval runs: TREC, JSONL, CSV and XLSX, streamed, all-or-nothing.

A run file is read once, line by line, into three growing arrays (query pk, item pk,
score); memory is proportional to the number of results, never to the file text. Every
bad line is reported by number. Unknown query or item ids are errors by default; with
``keep_known`` those lines are left out and counted on the run, so the dashboard can say
how much was dropped.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import numpy as np
from django.conf import settings
from django.db import transaction

from annotator.importing.errors import BadLine, ImportFailed
from annotator.importing.readers import read_rows
from annotator.models import Chunk, Chunking, Project

from .models import Run, RunLevel

MAX_ERRORS = 200
FORMATS = ("trec", "jsonl", "csv", "xlsx")


@dataclass
class RunImportFailed(Exception):
    errors: list[str]

    def __str__(self) -> str:
        return "\n".join(self.errors)


@dataclass
class _Collector:
    """Grows the result arrays block by block and gathers problems by line."""

    query_ids: dict[str, int]
    item_ids: dict[str, int]
    keep_known: bool
    errors: list[str] = field(default_factory=list)
    n_errors: int = 0
    query: list[int] = field(default_factory=list)
    item: list[int] = field(default_factory=list)
    score: list[float] = field(default_factory=list)
    line: list[int] = field(default_factory=list)
    unknown_queries: dict[str, int] = field(default_factory=dict)
    unknown_items: dict[str, int] = field(default_factory=dict)

    def error(self, line: int, message: str) -> None:
        self.n_errors += 1
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(f"line {line}: {message}")

    def add(self, line: int, qid: str, item_id: str, score: float) -> None:
        query_pk = self.query_ids.get(qid)
        item_pk = self.item_ids.get(item_id)
        if query_pk is None:
            self.unknown_queries[qid] = self.unknown_queries.get(qid, 0) + 1
            if not self.keep_known:
                self.error(line, f"unknown query id {qid!r}")
            return
        if item_pk is None:
            self.unknown_items[item_id] = self.unknown_items.get(item_id, 0) + 1
            if not self.keep_known:
                self.error(line, f"unknown id {item_id!r}")
            return
        if not math.isfinite(score):
            self.error(line, f"score must be a finite number, not {score!r}")
            return
        self.query.append(query_pk)
        self.item.append(item_pk)
        self.score.append(score)
        self.line.append(line)


def _parse_score(text, line: int, collector: _Collector) -> float | None:
    try:
        return float(text)
    except (TypeError, ValueError):
        collector.error(line, f"score {text!r} is not a number")
        return None


def _read_trec(handle: IO[str], collector: _Collector, progress) -> None:
    for number, raw in enumerate(handle, start=1):
        parts = raw.split()
        if not parts:
            continue
        if len(parts) != 6:
            collector.error(
                number, f"expected 6 columns 'qid Q0 docid rank score tag', found {len(parts)}"
            )
            continue
        score = _parse_score(parts[4], number, collector)
        if score is not None:
            collector.add(number, parts[0], parts[2], score)
        if progress and number % 50_000 == 0:
            progress(handle.buffer.tell() if hasattr(handle, "buffer") else 0)


def _read_jsonl(handle: IO[str], collector: _Collector, progress) -> None:
    for number, raw in enumerate(handle, start=1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except json.JSONDecodeError as error:
            collector.error(number, f"malformed JSON ({error.msg})")
            continue
        if not isinstance(row, dict) or "qid" not in row or "retrieved" not in row:
            collector.error(number, 'expected an object with "qid" and "retrieved"')
            continue
        retrieved = row["retrieved"]
        scores = row.get("scores")
        if not isinstance(retrieved, list):
            collector.error(number, '"retrieved" must be a list of ids')
            continue
        if scores is None:
            # Without scores the list order is the ranking: higher score for earlier items.
            scores = list(range(len(retrieved), 0, -1))
        if not isinstance(scores, list) or len(scores) != len(retrieved):
            collector.error(number, '"scores" must be a list as long as "retrieved"')
            continue
        for item_id, raw_score in zip(retrieved, scores, strict=True):
            score = _parse_score(raw_score, number, collector)
            if score is not None:
                collector.add(number, str(row["qid"]), str(item_id), score)
        if progress and number % 1000 == 0:
            progress(handle.buffer.tell() if hasattr(handle, "buffer") else 0)


ITEM_COLUMNS = ("docid", "doc_id", "chunk_id", "item", "id")


def _read_table(rows: Iterator[tuple[int, dict]], collector: _Collector) -> None:
    """CSV/XLSX rows with columns qid, an id column, and score (or rank)."""
    for number, row in rows:
        if isinstance(row, BadLine):
            collector.error(number, row.message)
            continue
        item_column = next((c for c in ITEM_COLUMNS if row.get(c) not in (None, "")), None)
        if row.get("qid") in (None, "") or item_column is None:
            collector.error(number, "each row needs a qid and an id (docid or chunk_id)")
            continue
        if row.get("score") not in (None, ""):
            score = _parse_score(row["score"], number, collector)
        elif row.get("rank") not in (None, ""):
            rank = _parse_score(row["rank"], number, collector)
            score = None if rank is None else -rank
        else:
            collector.error(number, "each row needs a score or a rank")
            continue
        if score is not None:
            collector.add(number, _cell_text(row["qid"]), _cell_text(row[item_column]), score)


def _cell_text(value) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def _duplicates(collector: _Collector) -> None:
    """Report every repeat of a (query, item) pair with the line where it repeats."""
    query = np.asarray(collector.query, dtype=np.int64)
    item = np.asarray(collector.item, dtype=np.int64)
    lines = np.asarray(collector.line, dtype=np.int64)
    order = np.lexsort((lines, item, query))
    same = (query[order][1:] == query[order][:-1]) & (item[order][1:] == item[order][:-1])
    for position in np.flatnonzero(same)[:MAX_ERRORS]:
        first, again = lines[order][position], lines[order][position + 1]
        collector.error(
            int(again), f"duplicate result: the same id for the same query as line {int(first)}"
        )


def detect_format(name: str, explicit: str | None = None) -> str:
    if explicit:
        if explicit not in FORMATS:
            raise RunImportFailed([f"unknown format {explicit!r}; use one of {', '.join(FORMATS)}"])
        return explicit
    suffix = Path(name).suffix.lower()
    return {".jsonl": "jsonl", ".csv": "csv", ".xlsx": "xlsx"}.get(suffix, "trec")


def import_run(
    project: Project,
    path: str | Path,
    *,
    name: str,
    chunking: Chunking | None = None,
    parameters: dict | None = None,
    format: str | None = None,
    keep_known: bool = False,
    replace: bool = False,
    created_by=None,
    progress: Callable[[int], None] | None = None,
    source_name: str | None = None,
) -> Run:
    """Read, validate and store a run in one transaction; raise RunImportFailed on any error."""
    path = Path(path)
    fmt = detect_format(path.name, format)
    size = path.stat().st_size
    if size > settings.ASSAY_MAX_UPLOAD_BYTES:
        raise RunImportFailed(
            [f"file is {size} bytes, over the limit of {settings.ASSAY_MAX_UPLOAD_BYTES} bytes"]
        )
    if size == 0:
        raise RunImportFailed(["the file is empty"])
    if not replace and Run.objects.filter(project=project, name=name).exists():
        raise RunImportFailed([f"a run named {name!r} already exists in this project"])
    query_ids = dict(project.queries.values_list("qid", "pk"))
    if chunking is not None:
        item_ids = dict(Chunk.objects.filter(chunking=chunking).values_list("chunk_id", "pk"))
    else:
        item_ids = dict(project.documents.values_list("doc_id", "pk"))
    collector = _Collector(query_ids, item_ids, keep_known)
    try:
        if fmt in ("trec", "jsonl"):
            with path.open(encoding="utf-8-sig", errors="strict") as handle:
                (_read_trec if fmt == "trec" else _read_jsonl)(handle, collector, progress)
        else:
            _read_table(read_rows(path, fmt), collector)
    except ImportFailed as error:
        raise RunImportFailed(error.errors) from None
    except UnicodeDecodeError as error:
        raise RunImportFailed([f"the file is not UTF-8 text (byte {error.start})"]) from None
    if not collector.query and not collector.errors:
        collector.error(1, "no results in the file")
    _duplicates(collector)
    if collector.errors:
        errors = sorted(collector.errors, key=_line_of)
        if collector.n_errors > len(errors):
            errors.append(f"… and {collector.n_errors - len(errors)} more problems")
        raise RunImportFailed(errors)
    dropped = sum(collector.unknown_queries.values()) + sum(collector.unknown_items.values())
    with transaction.atomic():
        if replace:
            Run.objects.filter(project=project, name=name).delete()
        run = Run(
            project=project,
            name=name,
            chunking=chunking,
            parameters=parameters or {},
            level=RunLevel.CHUNK if chunking is not None else RunLevel.DOCUMENT,
            source=source_name or path.name,
            created_by=created_by,
            n_dropped=dropped,
            dropped_summary={
                "unknown_queries": _summary(collector.unknown_queries),
                "unknown_items": _summary(collector.unknown_items),
            }
            if dropped
            else {},
        )
        run.set_results(
            np.asarray(collector.query),
            np.asarray(collector.item),
            np.asarray(collector.score, dtype=np.float64),
        )
        run.save()
    return run


def _summary(counts: dict[str, int]) -> dict:
    return {"results": sum(counts.values()), "ids": len(counts), "examples": sorted(counts)[:20]}


def _line_of(message: str) -> int:
    head = message.split(":", 1)[0]
    return int(head.removeprefix("line ")) if head.startswith("line ") else 0
