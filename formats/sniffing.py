"""What a file's first lines show it to be, whatever its name: the content decides.

A spreadsheet starts as a zip archive; JSON Lines hold an object per line; a BEIR-style
JSON file is one object of objects; a CSV line has commas and no whitespace-separated
shape of its own; TREC-style lines have four fields (qrels), six or more (a run) or three
(TSV: ``qid docid score``, BEIR's qrels with their ``query-id corpus-id score`` header).
"""

from __future__ import annotations

import json
from pathlib import Path

from .blocks import head

ZIP = b"PK\x03\x04"


def sniff(path: Path | str) -> str | None:
    """The format the file's first bytes show, or None when they do not tell."""
    if not Path(path).is_file():
        return None
    try:
        start = head(path)
    except OSError:
        return None
    if start.startswith(ZIP):
        return "xlsx"
    start = start.removeprefix(b"\xef\xbb\xbf")
    lines = [line.strip() for line in start.split(b"\n")[:-1] or [start]]
    meaningful = [line for line in lines if line and not line.startswith(b"#")]
    if not meaningful:
        return None
    first = meaningful[0]
    if first.startswith((b"{", b"[")):
        return _json_kind(first)
    fields = first.split()
    if b"\t" in first and len(first.split(b"\t")) == 3:
        return "tsv"
    if len(fields) == 4 and _number(fields[3]):
        return "qrels"
    if len(fields) >= 6 and _number(fields[4]):
        return "trec"
    if b"," in first:
        return "csv"
    if len(fields) == 3:
        return "tsv"
    return None


def _number(text: bytes) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _json_kind(first: bytes) -> str:
    """``jsonl`` when the first line is a whole object with fields (``qid``, ``_id``…),
    ``json`` when it opens a larger document or maps ids to objects (BEIR's runs)."""
    if not first.endswith((b"}", b"]")):
        return "json"  # a document over several lines
    try:
        value = json.loads(first)
    except (ValueError, RecursionError):
        return "jsonl"  # a line the JSON Lines reader will name
    if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
        return "json"
    return "jsonl" if isinstance(value, dict) else "json"
