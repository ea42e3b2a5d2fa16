"""Regular TREC runs through polars' CSV reader, a block at a time, joined with qrels.

A dense retriever's run over a large corpus holds millions of distinct document ids;
putting them all in byte order (as ``factorize`` does) costs far more than reading the
file. trec_eval never orders all ids: only a query's tied scores need a byte comparison,
and the join with the qrels only needs the judged (query, id) pairs. This reader does
the same: ids stay polars strings, the judged rows are found by a hash join on (query,
id) a block of rows at a time, repeated results by hashing, and ``tie_codes`` orders the
few tied ids on request. The file is parsed 8 MiB at a time, so that its text is never
held whole (memory follows the kept columns, not the file).

Only regular files take this path — one space (or one tab) between fields, six or more
fields on every line, no comment or blank line, no byte-order mark, UTF-8, finite
scores, not compressed — and anything else returns None, so that the caller reads the
file with the checked reader (``arrays.read_run``), which names every bad line. Both
give the same rows (tests/formats/test_columnar.py). In a regular file row i is line
i + 1.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .files import BOM, is_gzip
from .trec import last_tag

_FIELDS = ("qid", "q0", "docid", "rank", "score", "tag")
BLOCK_BYTES = 1 << 23  # text parsed at a time (8 MiB: fewer page faults than larger)
BLOCK_ROWS = 1 << 20  # rows joined or hashed at a time


@dataclass(frozen=True)
class RunFrame:
    """A run in file order: row i is query ``qids[query[i]]`` retrieving ``ids[i]`` with
    ``score[i]`` (line i + 1). ``qids`` (UTF-8 bytes) are in no particular order."""

    qids: np.ndarray
    query: np.ndarray
    score: np.ndarray
    ids: object  # polars.Series of str
    tag: str

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

    def repeated(self) -> bool:
        """Whether a (query, id) pair occurs twice: ids are hashed, (query, hash) keys
        sorted a block of queries at a time, and equal keys checked on the ids."""
        for start, stop in self._blocks():
            key = _pair_keys(self.query[start:stop], self.ids.slice(start, stop - start))
            if not (np.diff(np.sort(key)) == 0).any():  # cheaper than the argsort below
                continue
            order = np.argsort(key)
            same = np.flatnonzero(key[order][1:] == key[order][:-1])
            if same.size:
                first, second = order[same] + start, order[same + 1] + start
                ids = self.ids.gather(np.r_[first, second]).to_list()
                if any(a == b for a, b in zip(ids[: same.size], ids[same.size :], strict=True)):
                    return True
        return False

    def _blocks(self, rows: int = BLOCK_ROWS):
        """Row ranges of about ``rows`` rows that never split a query's rows, when each
        query's rows are contiguous (as retrievers write them); else the whole run."""
        n = self.query.size
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


def _ends(path: Path) -> tuple[bytes, bytes]:
    """The first line and the last 4 KiB of the file."""
    with path.open("rb") as handle:
        first = handle.read(1 << 16).split(b"\n", 1)[0]
        handle.seek(max(0, path.stat().st_size - 4096))
        return first, handle.read()


def _text_blocks(path: Path, size: int = BLOCK_BYTES) -> Iterator[bytes]:
    """The file in pieces of about ``size`` bytes, each ending at a line break (but the
    last, when the file does not end with one)."""
    rest = b""
    with path.open("rb") as handle:
        while chunk := handle.read(size):
            cut = chunk.rfind(b"\n") + 1
            if cut == 0:
                rest += chunk
                continue
            yield rest + chunk[:cut]
            rest = chunk[cut:]
    if rest:
        yield rest


# Bytes that make a block irregular for its separator: other whitespace (the checked
# reader splits on any run of it, so a field holding some would be cut differently),
# a doubled separator (an empty field shifts the ones after it) or a line that starts
# with one.
_IRREGULAR = {
    " ": (b"\t", b"\r", b"\x0b", b"\x0c", b"  ", b"\n "),
    "\t": (b" ", b"\r", b"\x0b", b"\x0c", b"\t\t", b"\n\t"),
}


def _parse(text: bytes, separator: str):
    """A block of lines as (qid, docid, score) columns, or None if a line is irregular."""
    import polars as pl

    if any(mark in text for mark in _IRREGULAR[separator]):
        return None

    schema = pl.Schema({name: pl.String for name in _FIELDS} | {"score": pl.Float64})
    frame = (
        pl.scan_csv(
            text,
            separator=separator,
            has_header=False,
            quote_char=None,
            schema=schema,
            truncate_ragged_lines=True,
            extra_columns="ignore",
        )
        .select(
            "qid",
            "docid",
            "score",
            pl.any_horizontal(
                pl.col("tag").is_null(),
                pl.col("qid").is_null(),
                pl.col("docid").is_null(),
                pl.col("qid").str.len_bytes() == 0,
                pl.col("docid").str.len_bytes() == 0,
                pl.col("score").is_null(),
                ~pl.col("score").is_finite(),
            ).alias("irregular"),
        )
        .collect()
    )
    return None if frame["irregular"].any() else frame


def read_regular_run(path: Path | str, *, block_bytes: int = BLOCK_BYTES) -> RunFrame | None:
    """A regular TREC run file as a ``RunFrame``, or None (take the checked reader)."""
    path = Path(path)
    if is_gzip(path) or not path.is_file() or path.stat().st_size == 0:
        return None
    first, tail = _ends(path)
    separators = [s for s in (b" ", b"\t") if s in first]
    if len(separators) != 1 or first.startswith((separators[0], BOM)):
        return None
    import polars as pl

    code: dict[str, int] = {}  # query id -> its code, in order of first appearance
    query, score, ids = [], [], []
    try:
        for text in _text_blocks(path, block_bytes):
            frame = _parse(text, separators[0].decode())
            del text
            if frame is None:
                return None
            distinct = frame["qid"].unique(maintain_order=True).to_list()
            for qid in distinct:
                code.setdefault(qid, len(code))
            query.append(
                frame["qid"]
                .replace_strict(distinct, [code[q] for q in distinct], return_dtype=pl.Int32)
                .to_numpy()
            )
            score.append(frame["score"].to_numpy())
            ids.append(frame["docid"])
    except (pl.exceptions.PolarsError, OSError, ValueError):
        return None
    qids = np.array([q.encode() for q in code], dtype=np.bytes_)
    if any(q.startswith((b"#", BOM)) for q in qids.tolist()):  # a comment line
        return None
    # One list at a time, so that a column and its blocks are never all held at once.
    query = np.concatenate(query)
    score = np.concatenate(score)
    return RunFrame(qids=qids, query=query, score=score, ids=pl.concat(ids), tag=last_tag(tail))
