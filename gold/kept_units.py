"""A level's units kept in a file (``annotator.kept_files``), so that a new process reads
one file instead of every document (their lengths: PostgreSQL detoasts each text to
measure it) or every chunk of the level: 0.5–0.7 s at 100,000 documents on SQLite."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
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
    created = int(created_at.timestamp() * 1_000_000)
    level_key = hashlib.blake2b(level.encode(), digest_size=8).hexdigest()
    # Dots, not dashes: no pattern of a run's files (``{database}-{run}-…``) matches these.
    stem = f"units.{kept_files.database_key()}.{project_pk}.{created}.{level_key}"
    path = kept_files.folder() / f"{stem}.{count}.{reset}.npy"
    arrays = kept_files.read_arrays(path, 7)
    units = None if arrays is None else _units_of(level, arrays)
    if units is None:
        units = build()
        kept_files.write_arrays(path, _arrays_of(units))
        for older in path.parent.glob(f"{stem}.*.npy"):
            if older != path:
                older.unlink(missing_ok=True)
    return units


def _arrays_of(units: Units) -> list[np.ndarray]:
    """The ids as one UTF-8 buffer with each id's byte length, the four int arrays, then
    the ids' byte-order codes (sorting millions of ids is most of a first render's time)."""
    ids = [i.encode() for i in units.ids.tolist()]
    lengths = np.fromiter((len(i) for i in ids), dtype=np.int64, count=len(ids))
    text = np.frombuffer(b"".join(ids), dtype=np.uint8)
    return [lengths, text, units.pk, units.document, units.start, units.end, units.codes]


def _units_of(level: str, arrays: list[np.ndarray]) -> Units | None:
    """Units from ``_arrays_of``'s arrays; None when they do not hold together."""
    from .units import Units, fingerprint_of  # it imports this module

    lengths, text, *spans, codes = arrays
    n = lengths.size
    if lengths.dtype.kind not in "iu" or text.dtype != np.uint8:
        return None
    if any(a.ndim != 1 or a.size != n or a.dtype.kind not in "iu" for a in [*spans, codes]):
        return None
    if (lengths < 0).any() or int(lengths.sum()) != text.size:
        return None
    if n and (codes.min() < 0 or codes.max() >= n or (np.bincount(codes, minlength=n) != 1).any()):
        return None  # not a permutation of 0 .. n-1
    ends = np.cumsum(lengths)
    separated = _joined_by_nul(text, ends).tobytes()
    try:
        if n and not (text == 0).any():  # one split in C (millions of ids: a second less)
            ids = separated.decode().split("\0")
        else:
            joined, bounds = text.tobytes(), ends.tolist()
            starts = [0, *bounds[:-1]] if bounds else []
            ids = [joined[a:b].decode() for a, b in zip(starts, bounds, strict=True)]
    except UnicodeDecodeError:
        return None
    id_array = np.empty(n, dtype=object)
    id_array[:] = ids
    pk, document, start, end = (a.astype(np.int64, copy=False) for a in spans)
    units = Units(level, id_array, pk, document, start, end)
    # What the units would derive from their ids, taken from the file instead (a cached
    # property's value lives in the instance's __dict__, frozen or not).
    codes = codes.astype(np.int64, copy=False)
    codes.flags.writeable = False
    units.__dict__["codes"] = codes
    units.__dict__["fingerprint"] = fingerprint_of(level, separated, (pk, document, start, end))
    return units


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
    from annotator.models import Project

    folder = kept_files.folder()
    if not folder.is_dir():
        return 0
    paths = list(folder.glob(f"units.{kept_files.database_key()}.*.npy"))
    pks = {p.name.split(".")[2] for p in paths}
    alive = {
        f"{pk}.{int(created.timestamp() * 1_000_000)}"
        for pk, created in Project.objects.filter(
            pk__in=[int(pk) for pk in pks if pk.isdigit()]
        ).values_list("pk", "created_at")
    }
    gone = [p for p in paths if ".".join(p.name.split(".")[2:4]) not in alive]
    for path in gone:
        path.unlink(missing_ok=True)
    return len(gone)
