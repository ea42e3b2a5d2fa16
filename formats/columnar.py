"""Runs as columns that keep their ids as text: a ``RunFrame``, joined with qrels by hash.

A dense retriever's run over a large corpus holds millions of distinct document ids;
putting them all in byte order (as ``factorize`` does) costs far more than reading the
file. trec_eval never orders all ids: only a query's tied scores need a byte comparison,
and the join with the qrels only needs the judged (query, id) pairs. A ``RunFrame`` does
the same: ids stay polars strings, the judged rows are found by a hash join on (query,
id) a block of rows at a time, repeated results by hashing, and ``tie_codes`` orders the
few tied ids on request. ``read_trec_run`` fills one from any TREC or TSV run through the
one TREC reader (``formats.trec``), a block of text at a time, so that the file's text is
never held whole (memory follows the kept columns, not the file).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .blocks import BLOCK_BYTES
from .errors import LineErrors
from .records import NO_RESULTS, repeated
from .trec import read_blocks

BLOCK_ROWS = 1 << 20  # rows joined or hashed at a time


@dataclass(frozen=True)
class LineNumbers:
    """The file line of each row, kept as runs of consecutive lines: row ``starts[i]``
    is on line ``first[i]`` and the rows after it on the lines after it, up to the next
    start (a regular file is one run; each skipped line starts another)."""

    starts: np.ndarray
    first: np.ndarray

    @classmethod
    def of(cls, lines: list[np.ndarray]) -> LineNumbers:
        """From the line numbers of consecutive pieces of rows."""
        runs = LineRuns()
        for line in lines:
            runs.add(line)
        return runs.numbers()

    def __call__(self, rows) -> np.ndarray:
        rows = np.asarray(rows, dtype=np.int64)
        run = np.searchsorted(self.starts, rows, side="right") - 1
        return self.first[run] + rows - self.starts[run]


class LineRuns:
    """``LineNumbers`` built a piece of rows at a time, each piece kept only as its runs
    of consecutive lines (a block's line numbers would cost 8 bytes a row)."""

    def __init__(self) -> None:
        self.starts: list[np.ndarray] = []
        self.first: list[np.ndarray] = []
        self.rows = 0

    def add(self, line: np.ndarray) -> None:
        if line.size:
            breaks = np.r_[0, np.flatnonzero(np.diff(line) != 1) + 1]
            self.starts.append(breaks + self.rows)
            self.first.append(line[breaks])
        self.rows += line.size

    def numbers(self) -> LineNumbers:
        none = [np.zeros(0, dtype=np.int64)]
        return LineNumbers(np.concatenate(self.starts or none), np.concatenate(self.first or none))


@dataclass(frozen=True)
class RunFrame:
    """A run in file order: row i is query ``qids[query[i]]`` retrieving ``ids[i]`` with
    ``score[i]``, on line ``lines(i)``. ``qids`` (UTF-8 bytes) are in no particular
    order; ``tag`` is the run tag of the last line (trec_eval's ``runid``)."""

    qids: np.ndarray
    query: np.ndarray
    score: np.ndarray
    ids: object  # polars.Series of str
    tag: str
    lines: LineNumbers

    def without_repeats(self, errors: LineErrors) -> RunFrame:
        """The run less each row that repeats the (query, id) of a row above it, every
        repeat reported on its line with the line of the first."""
        again, first = self.repeats()
        if not again.size:
            return self
        line_again, line_first = self.lines(again), self.lines(first)
        ids = self.ids.gather(again).to_list()
        errors.add_each(
            line_again,
            lambda i: repeated(
                self.qids[self.query[again[i]]].decode(), ids[i], int(line_first[i])
            ),
        )
        keep = np.ones(self.query.size, dtype=bool)
        keep[again] = False
        rows = np.flatnonzero(keep)
        return RunFrame(
            qids=self.qids,
            query=self.query[rows],
            score=self.score[rows],
            ids=self.ids.gather(rows),
            tag=self.tag,
            lines=LineNumbers.of([self.lines(rows)]),
        )

    def tie_codes(self, rows: np.ndarray) -> np.ndarray:
        """Codes of the ids of ``rows`` whose order is the ids' byte order (strcmp)."""
        ids = np.array([i.encode() for i in self.ids.gather(rows).to_list()], dtype=np.bytes_)
        return np.unique(ids, return_inverse=True)[1].ravel()

    def matches(
        self, query: np.ndarray, qrel_query: np.ndarray, qrel_ids, *, rows: int = BLOCK_ROWS
    ) -> tuple[np.ndarray, np.ndarray]:
        """The rows whose (query, id) is a qrels row, ascending, and that qrels row.
        ``query`` is each run row's query as a qrels query code (negative for a query
        the qrels lack); qrels row j is (``qrel_query[j]``, ``qrel_ids[j]``). A hash join
        on one integer key per pair (query and the id's hash), ``rows`` run rows at a
        time, each candidate then checked on the ids themselves: memory follows the
        block and the matches (at most the qrels), never the run."""
        import polars as pl

        qrel_query = np.asarray(qrel_query, dtype=np.int64)
        qrels = pl.DataFrame(
            {"key": _pair_keys(qrel_query, qrel_ids), "qrel": np.arange(qrel_query.size)}
        )
        found_row, found_qrel = [], []
        for start in range(0, self.query.size, rows):
            stop = min(start + rows, self.query.size)
            key = _pair_keys(query[start:stop], self.ids.slice(start, stop - start))
            block = pl.DataFrame({"key": key, "row": np.arange(start, stop, dtype=np.int64)})
            hit = block.join(qrels, on="key", how="inner")
            found_row.append(hit["row"].to_numpy())
            found_qrel.append(hit["qrel"].to_numpy())
        none = [np.zeros(0, dtype=np.int64)]
        row = np.concatenate(found_row or none).astype(np.int64)
        qrel = np.concatenate(found_qrel or none).astype(np.int64)
        # Equal keys are candidates: keep the pairs whose query and id are equal.
        same = (query[row] == qrel_query[qrel]) & (
            self.ids.gather(row) == qrel_ids.gather(qrel)
        ).to_numpy()
        row, qrel = row[same], qrel[same]
        order = np.argsort(row, kind="stable")
        return row[order], qrel[order]

    def lookup(self, names: list[str], values: np.ndarray, *, rows: int = BLOCK_ROWS):
        """``values[j]`` for each row whose id is ``names[j]`` (distinct), -1 for an id
        not among them: a hash join, ``rows`` run rows at a time."""
        import polars as pl

        table = pl.DataFrame(
            {"id": pl.Series(names, dtype=pl.String), "value": np.asarray(values, np.int64)}
        )
        found = np.empty(self.query.size, dtype=np.int64)
        for start in range(0, self.query.size, rows):
            stop = min(start + rows, self.query.size)
            block = pl.DataFrame({"id": self.ids.slice(start, stop - start)})
            value = block.join(table, on="id", how="left", maintain_order="left")["value"]
            found[start:stop] = value.fill_null(-1).to_numpy()
        return found

    def repeats(self) -> tuple[np.ndarray, np.ndarray]:
        """Rows whose (query, id) pair occurs on an earlier row, ascending, and that
        earlier row (the pair's first): ids are hashed, (query, hash) keys sorted a block
        of queries at a time, and equal keys checked on the ids themselves."""
        again, first = [], []
        for start, stop in self._blocks():
            key = _pair_keys(self.query[start:stop], self.ids.slice(start, stop - start))
            if not (np.diff(np.sort(key)) == 0).any():  # cheaper than the argsort below
                continue
            order = np.argsort(key, kind="stable")
            sorted_key = key[order]
            head = np.r_[True, sorted_key[1:] != sorted_key[:-1]]
            group_first = order[np.flatnonzero(head)[np.cumsum(head) - 1]]
            members = np.flatnonzero(~head)
            rows, heads = order[members] + start, group_first[members] + start
            names = self.ids.gather(np.r_[rows, heads]).to_list()
            for row, head_row, name, head_name in zip(
                rows.tolist(), heads.tolist(), names[: rows.size], names[rows.size :], strict=True
            ):
                if name == head_name:  # equal hashes of different ids are no repeat
                    again.append(row)
                    first.append(head_row)
        order = np.argsort(np.asarray(again, dtype=np.int64), kind="stable")
        return (
            np.asarray(again, dtype=np.int64)[order],
            np.asarray(first, dtype=np.int64)[order],
        )

    def _blocks(self, rows: int = BLOCK_ROWS):
        """Row ranges of about ``rows`` rows that never split a query's rows, when each
        query's rows are contiguous (as retrievers write them); else the whole run."""
        n = self.query.size
        if n == 0:
            return
        heads = np.r_[0, np.flatnonzero(self.query[1:] != self.query[:-1]) + 1]
        if np.unique(self.query[heads]).size != heads.size:
            yield 0, n
            return
        start = 0
        while start < n:
            at = np.searchsorted(heads, start + rows)
            stop = int(heads[at]) if at < heads.size else n
            yield start, stop
            start = stop


def _pair_keys(query: np.ndarray, ids) -> np.ndarray:
    """One 64-bit key per (query, id): the query code (below 2**24) in the high bits, 40
    bits of the id's hash below; a negative query gets a key of all ones. Equal pairs
    have equal keys; equal keys are checked on the ids by the callers."""
    query = np.asarray(query)
    key = query.astype(np.uint64) << np.uint64(40)
    key |= ids.hash(seed=0).to_numpy() >> np.uint64(24)
    key[query < 0] = np.iinfo(np.uint64).max
    return key


def read_trec_run(
    source: Path | str,
    fmt: str = "trec",
    *,
    errors: LineErrors | None = None,
    max_bytes: int | None = None,
    block_bytes: int = BLOCK_BYTES,
) -> RunFrame:
    """A TREC run (``fmt`` "trec") or a TSV run ("tsv_run": ``qid docid score``) as a
    ``RunFrame``, through the one TREC reader (``formats.trec``: a path or ``-``, plain
    or gzip). Bad lines and repeated results raise ``FileRejected``; given ``errors``,
    they are added there and left out instead."""
    import polars as pl

    collected = LineErrors() if errors is None else errors
    code: dict[str, int] = {}  # query id -> its code, in order of first appearance
    query, score, ids, lines = [], [], [], LineRuns()
    tag = ""
    for parsed in read_blocks(source, fmt, collected, max_bytes=max_bytes, block_bytes=block_bytes):
        distinct = parsed.qid.unique(maintain_order=True).to_list()
        for qid in distinct:
            code.setdefault(qid, len(code))
        query.append(
            parsed.qid.replace_strict(
                distinct, [code[q] for q in distinct], return_dtype=pl.Int32
            ).to_numpy()
        )
        score.append(parsed.value)
        ids.append(parsed.item)
        lines.add(parsed.line)
        tag = parsed.tag if parsed.tag is not None else tag
    if not ids and not collected:
        collected.add(0, NO_RESULTS())
    qids = np.array([q.encode() for q in code], dtype=np.bytes_)
    # One list at a time, so that a column and its blocks are never all held at once.
    frame = RunFrame(
        qids=qids,
        query=np.concatenate(query or [np.zeros(0, np.int32)]),
        score=np.concatenate(score or [np.zeros(0)]),
        ids=pl.concat(ids) if ids else pl.Series([], dtype=pl.String),
        tag=tag,
        lines=lines.numbers(),
    )
    frame = frame.without_repeats(collected)
    if errors is None:
        collected.raise_if_any()
    return frame
