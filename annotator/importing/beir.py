"""A BEIR dataset folder in one import: ``corpus.jsonl`` (``_id``, ``title``, ``text``),
``queries.jsonl`` (``_id``, ``text``) and ``qrels/<split>.tsv`` (``query-id corpus-id
score``, with its header).

Every document comes in; of the queries, those the split's qrels judge (BEIR's
queries.jsonl holds every split's); the qrels as document labels of a pseudo-annotator
(``beir-<split>`` unless named). All in one transaction: a bad line anywhere writes
nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from django.db import transaction

from formats import BadLine, FileRejected, RowSource, first_id, read_qrels
from formats.errors import define, gettext_noop

from ..models import Project
from . import run_import
from .common import ImportResult
from .corpus import import_queries

MISSING_PART = define("beir.missing_part", gettext_noop("the BEIR folder lacks %(name)s"))


def beir_files(folder: Path | str, split: str) -> dict[str, Path]:
    folder = Path(folder)
    files = {
        "documents": folder / "corpus.jsonl",
        "queries": folder / "queries.jsonl",
        "labels": folder / "qrels" / f"{split}.tsv",
    }
    missing = [str(path.relative_to(folder)) for path in files.values() if not path.is_file()]
    if missing:
        raise FileRejected([MISSING_PART(name=name) for name in missing])
    return files


def import_beir(
    project: Project, folder: Path | str, *, split: str = "test", annotator: str = ""
) -> dict[str, ImportResult]:
    """Import a BEIR folder (see the module); ``FileRejected`` names the file and its
    bad lines, and nothing is written."""
    files = beir_files(folder, split)
    judged = {q.decode() for q in read_qrels(files["labels"], "tsv").qids.tolist()}
    results = {}
    with transaction.atomic():
        for kind in ("documents", "queries", "labels"):
            try:
                if kind == "queries":
                    source = RowSource(files[kind], "jsonl")
                    results[kind] = import_queries(project, _of_split(source, judged))
                else:
                    options = {"annotator": annotator or f"beir-{split}", "level": "document"}
                    results[kind] = run_import(kind, project, files[kind], options=options)
            except FileRejected as rejected:
                rejected.source = rejected.source or files[kind].name
                raise
    return results


def _of_split(rows: RowSource, judged: set[str]) -> Iterator:
    """The queries the split judges (and every bad line, to be reported)."""
    for line, row in rows:
        if isinstance(row, BadLine) or first_id(row, ("qid", "id", "_id")) in judged:
            yield line, row
