"""Regular TREC runs through polars' multi-threaded CSV reader, joined with qrels by id.

A dense retriever's run over a large corpus holds millions of distinct document ids;
putting them all in byte order (as ``factorize`` does) costs far more than reading the
file. trec_eval never orders all ids: only a query's tied scores need a byte comparison,
and the join with the qrels only needs the judged ids. This reader does the same: ids
stay polars strings, the judged ones are found by a hash join with the qrels' ids,
repeated results by hashing, and ``tie_codes`` orders the few tied ids on request.

Only regular files take this path — one space (or one tab) between fields, six or more
fields on every line, no comment or blank line, no byte-order mark, UTF-8, finite
scores, not compressed — and anything else returns None, so that the caller reads the
file with the checked reader (``arrays.read_run``), which names every bad line. Both
give the same measures (tests/formats/test_columnar.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .files import BOM, is_gzip
from .trec import last_tag

_FIELDS = ("qid", "q0", "docid", "rank", "score", "tag")


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

    def judged(self, items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rows whose id is among ``items`` (sorted UTF-8 bytes) and each one's code in
        ``items``: a hash join, the run's ids are never sorted."""
        import polars as pl

        names = pl.Series([i.decode() for i in items.tolist()], dtype=pl.String)
        rows = np.flatnonzero(self.ids.is_in(names.implode()).to_numpy())
        found = pl.DataFrame({"id": self.ids.gather(rows)}).join(
            pl.DataFrame({"id": names, "code": np.arange(items.size)}),
            on="id",
            how="left",
            maintain_order="left",
        )
        return rows.astype(np.int64), found["code"].to_numpy().astype(np.int64)

    def repeated(self) -> bool:
        """Whether a (query, id) pair occurs twice: ids are hashed, (query, hash) keys
        sorted a block of queries at a time, and equal keys checked on the ids."""
        for start, stop in self._blocks():
            key = self.query[start:stop].astype(np.uint64)
            key <<= np.uint64(40)
            key |= self.ids.slice(start, stop - start).hash(seed=0).to_numpy() >> np.uint64(24)
            order = np.argsort(key)
            same = np.flatnonzero(key[order][1:] == key[order][:-1])
            if same.size:
                first, second = order[same] + start, order[same + 1] + start
                ids = self.ids.gather(np.r_[first, second]).to_list()
                if any(a == b for a, b in zip(ids[: same.size], ids[same.size :], strict=True)):
                    return True
        return False

    def _blocks(self, rows: int = 1 << 20):
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


def _ends(path: Path) -> tuple[bytes, bytes]:
    """The first line and the last 4 KiB of the file."""
    with path.open("rb") as handle:
        first = handle.read(1 << 16).split(b"\n", 1)[0]
        handle.seek(max(0, path.stat().st_size - 4096))
        return first, handle.read()


def read_regular_run(path: Path | str) -> RunFrame | None:
    """A regular TREC run file as a ``RunFrame``, or None (take the checked reader)."""
    path = Path(path)
    if is_gzip(path) or not path.is_file() or path.stat().st_size == 0:
        return None
    first, tail = _ends(path)
    separators = [s for s in (b" ", b"\t") if s in first]
    if len(separators) != 1 or first.startswith((separators[0], BOM)):
        return None
    import polars as pl

    schema = pl.Schema({name: pl.String for name in _FIELDS} | {"score": pl.Float64})
    try:
        frame = (
            pl.scan_csv(
                path,
                separator=separators[0].decode(),
                has_header=False,
                quote_char=None,
                schema=schema,
                truncate_ragged_lines=True,
                extra_columns="ignore",
            )
            .select(
                pl.col("qid").cast(pl.Categorical),
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
            .collect(engine="streaming")
        )
    except (pl.exceptions.PolarsError, OSError, ValueError):
        return None
    if frame["irregular"].any():
        return None
    qid = frame["qid"]
    distinct = qid.unique()
    qids = np.array([q.encode() for q in distinct.cast(pl.String).to_list()], dtype=np.bytes_)
    if any(q.startswith((b"#", BOM)) for q in qids.tolist()):  # a comment line
        return None
    lookup = np.zeros(int(distinct.to_physical().max()) + 1, dtype=np.int32)
    lookup[distinct.to_physical().to_numpy()] = np.arange(qids.size, dtype=np.int32)
    query = lookup[qid.to_physical().to_numpy()]
    return RunFrame(
        qids=qids,
        query=query,
        score=frame["score"].to_numpy(),
        ids=frame["docid"],
        tag=last_tag(tail),
    )
