"""A level's units kept in a file (``annotator.kept_files``), so that a new process reads
one file instead of every document (their lengths: PostgreSQL detoasts each text to
measure it) or every chunk of the level: 0.5–0.7 s at 100,000 documents on SQLite."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from annotator import kept_files

if TYPE_CHECKING:
    from .units import Units


def kept_units(key: tuple, build: Callable[[], Units]) -> Units:
    """The units named by ``key`` (``gold.units.level_units``' key: project, its creation,
    level, unit count, reset revision) from their file; built by ``build`` and written
    when there is none or it does not hold together. Writing a level's units deletes the
    level's earlier files."""
    _kind, project_pk, created_at, level, count, reset = key
    level_key = hashlib.blake2b(level.encode(), digest_size=8).hexdigest()
    stem = f"{kept_files.project_stem('units', project_pk, created_at)}.{level_key}"
    path = kept_files.folder() / f"{stem}.{count}.{reset}.npy"
    arrays = kept_files.read_arrays(path, 8)
    units = None if arrays is None else _units_of(level, arrays)
    if units is None:
        units = build()
        kept_files.write_arrays(path, _arrays_of(units))
        kept_files.keep_latest(path, stem)
    return units


def _arrays_of(units: Units) -> list[np.ndarray]:
    """The units' fingerprint (ASCII), the ids as one UTF-8 buffer with each id's byte
    length, the four int arrays, then the ids' byte-order codes (sorting millions of ids
    is most of a first render's time)."""
    ids = [i.encode() for i in units.ids.tolist()]
    lengths = np.fromiter((len(i) for i in ids), dtype=np.int64, count=len(ids))
    text = np.frombuffer(b"".join(ids), dtype=np.uint8)
    fingerprint = np.frombuffer(units.fingerprint.encode("ascii"), dtype=np.uint8)
    spans = [units.pk, units.document, units.start, units.end]
    return [fingerprint, lengths, text, *spans, units.codes]


def _units_of(level: str, arrays: list[np.ndarray]) -> Units | None:
    """Units from ``_arrays_of``'s arrays; None when they do not hold together. The ids
    are decoded when first asked for, and the fingerprint is the one written with them:
    decoding and hashing 5,000,000 ids took 0.8–1.4 s of a first render."""
    from .units import Units  # it imports this module

    fingerprint, lengths, text, *spans, codes = arrays
    n = lengths.size
    if lengths.dtype.kind not in "iu" or text.dtype != np.uint8 or fingerprint.dtype != np.uint8:
        return None
    if any(a.ndim != 1 or a.size != n or a.dtype.kind not in "iu" for a in [*spans, codes]):
        return None
    if (lengths < 0).any() or int(lengths.sum()) != text.size:
        return None
    if n and (codes.min() < 0 or codes.max() >= n or (np.bincount(codes, minlength=n) != 1).any()):
        return None  # not a permutation of 0 .. n-1
    try:
        fingerprint = fingerprint.tobytes().decode("ascii")
    except UnicodeDecodeError:
        return None
    ids = KeptIds(text, np.cumsum(lengths))
    pk, document, start, end = (a.astype(np.int64, copy=False) for a in spans)
    units = Units(level, ids, pk, document, start, end)
    # What the units would derive from their ids, taken from the file instead (a cached
    # property's value lives in the instance's __dict__, frozen or not).
    codes = codes.astype(np.int64, copy=False)
    codes.flags.writeable = False
    units.__dict__["codes"] = codes
    units.__dict__["fingerprint"] = fingerprint
    return units


class KeptIds:
    """A units file's ids, as the object array of str they stand for (``Units.ids``),
    each decoded when it is asked for: a page names a few units of millions. Asked for
    all of them (``tolist``, a comparison, a large selection, numpy), it decodes them all
    once. An id that is not UTF-8 raises ``UnicodeDecodeError`` (the file is written from
    str, and a damaged file fails the length checks first)."""

    ndim = 1
    dtype = np.dtype(object)

    def __init__(self, text: np.ndarray, ends: np.ndarray):
        self._text, self._ends = text, ends
        self._decoded = 0  # ids decoded one at a time so far

    @property
    def size(self) -> int:
        return int(self._ends.size)

    @property
    def shape(self) -> tuple[int]:
        return (self.size,)

    @property
    def text_bytes(self) -> int:
        return int(self._text.size)

    def __len__(self) -> int:
        return self.size

    def _one(self, index: int) -> str:
        if index < 0:
            index += self.size
        if not 0 <= index < self.size:
            raise IndexError(index)
        start = int(self._ends[index - 1]) if index else 0
        return self._text[start : int(self._ends[index])].tobytes().decode()

    @cached_property
    def _all(self) -> np.ndarray:
        n, text = self.size, self._text
        if n and not (text == 0).any():  # one split in C
            ids = _joined_by_nul(text, self._ends).tobytes().decode().split("\0")
        else:
            joined, bounds = text.tobytes(), self._ends.tolist()
            starts = [0, *bounds[:-1]] if bounds else []
            ids = [joined[a:b].decode() for a, b in zip(starts, bounds, strict=True)]
        out = np.empty(n, dtype=object)
        out[:] = ids
        return out

    def __getitem__(self, index):
        if "_all" in self.__dict__:
            return self._all[index]
        if isinstance(index, int | np.integer):
            self._decoded += 1
            if self._decoded > self._many:  # a whole export: decode all at once
                return self._all[index]
            return self._one(int(index))
        if isinstance(index, slice):
            index = np.arange(self.size)[index]
        index = np.asarray(index)
        if index.dtype == bool:
            return self._all[index]
        self._decoded += index.size
        if self._decoded > self._many:
            return self._all[index]
        out = np.empty(index.shape, dtype=object)
        out.reshape(-1)[:] = [self._one(i) for i in index.reshape(-1).tolist()]
        return out

    def __array__(self, dtype=None, copy=None):
        return self._all if dtype is None else self._all.astype(dtype)

    def __iter__(self):
        return iter(self._all)

    def tolist(self) -> list[str]:
        return self._all.tolist()

    @property
    def _many(self) -> int:
        return max(self.size // 16, 1024)

    def __eq__(self, other):
        """Element-wise; a str is looked for in the bytes (a page naming one unit by its id
        decodes none), and found only where equal (numpy's comparison with a str ignores
        its trailing NULs)."""
        if not isinstance(other, str):
            return self._all == other
        target = np.frombuffer(other.encode(), dtype=np.uint8)
        starts = np.r_[0, self._ends[:-1]] if self.size else self._ends
        candidates = np.flatnonzero(self._ends - starts == target.size)
        equal = np.zeros(self.size, dtype=bool)
        for block in np.array_split(candidates, candidates.size // 65536 + 1):
            places = starts[block][:, None] + np.arange(target.size)
            equal[block] = (self._text[places] == target).all(axis=1)
        return equal

    def __ne__(self, other):
        return self._all != other

    __hash__ = None


def _joined_by_nul(text: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The ids' UTF-8 bytes with a NUL byte between each two (``"\\0".join(ids)``): the
    text's bytes are written around the separators' places (``np.insert`` took seconds)."""
    if ends.size < 2:
        return text
    separators = ends[:-1] + np.arange(ends.size - 1)  # their places in the output
    out = np.zeros(text.size + separators.size, dtype=np.uint8)
    keep = np.ones(out.size, dtype=bool)
    keep[separators] = False
    out[keep] = text
    return out


def prune() -> int:
    """Delete this database's units files of projects that no longer exist; how many."""
    return kept_files.prune_project_files("units")
