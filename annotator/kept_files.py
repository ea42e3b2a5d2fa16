"""Derived arrays kept as files in ``ASSAY_RUN_INDEX_DIR``, so that a new process reads
them instead of deriving them again (a run's index and stored rows: ``metrics.run_indexes``;
a level's units: ``gold.units``).

Each file's name holds what identifies its content, so a file is never stale, only unused;
one that cannot be read, or does not hold together, is derived and written again. Files
are written aside and renamed: a reader never sees half a file. Everything here is a cache:
the folder is safe to delete.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import connection

log = logging.getLogger(__name__)


def folder() -> Path:
    return Path(settings.ASSAY_RUN_INDEX_DIR)


def database_key() -> str:
    """Short name of the database in use (two databases may hold rows with equal pks)."""
    config = connection.settings_dict
    identity = "\0".join(str(config.get(k, "")) for k in ("ENGINE", "HOST", "PORT", "NAME"))
    return hashlib.blake2b(identity.encode(), digest_size=6).hexdigest()


def _checksum(arrays: list[np.ndarray]) -> np.ndarray:
    """CRC-32 of the arrays' types, shapes and bytes: a file damaged on disk is read as
    missing, not as other labels or units (0.1 s for 270 MB; a file is our own, so an
    accidental change is all it guards against)."""
    crc = 0
    for array in arrays:
        array = np.ascontiguousarray(array)
        crc = zlib.crc32(f"{array.dtype.str}{array.shape}".encode(), crc)
        crc = zlib.crc32(array.reshape(-1).view(np.uint8), crc)
    return np.array([crc], dtype=np.uint32)


def write_arrays(path: Path, arrays: list) -> bool:
    """Keep ``arrays`` in ``path``, one ``.npy`` after another and then their checksum
    (written aside, then renamed); whether it was written. A file that cannot be written
    is logged and skipped: it is only a cache."""
    temporary = None
    arrays = [np.asarray(array) for array in arrays]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(
            dir=path.parent, prefix=".", suffix=".part", delete=False
        ) as handle:
            temporary = Path(handle.name)
            for array in [*arrays, _checksum(arrays)]:
                np.save(handle, array, allow_pickle=False)
        os.replace(temporary, path)
    except OSError as error:
        log.warning("file %s not kept: %s", path.name, error)
        if temporary is not None:
            temporary.unlink(missing_ok=True)
        return False
    return True


def read_arrays(path: Path, count: int) -> list[np.ndarray] | None:
    """The ``count`` arrays kept in ``path``; None when there is no such file or it cannot
    be read or its checksum differs (logged)."""
    try:
        with open(path, "rb") as handle:
            arrays = [np.load(handle, allow_pickle=False) for _ in range(count)]
            checksum = np.load(handle, allow_pickle=False)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, EOFError) as error:
        log.warning("file %s unreadable (%s): building it again", path.name, error)
        return None
    if not np.array_equal(checksum, _checksum(arrays)):
        log.warning("file %s damaged (its checksum differs): building it again", path.name)
        return None
    return arrays


# A writer killed between writing aside and renaming leaves its ``.part``; none takes
# longer than this, so an older one is nobody's.
STALE_PART_SECONDS = 3600


def remove_stale_parts(older_than: float = STALE_PART_SECONDS) -> int:
    """Delete the files writers killed half way left behind (older than ``older_than``
    seconds); how many."""
    if not folder().is_dir():
        return 0
    now, removed = time.time(), 0
    for part in folder().glob(".*.part"):
        try:
            if now - part.stat().st_mtime > older_than:
                part.unlink()
                removed += 1
        except FileNotFoundError:  # its writer renamed it, or another prune was first
            continue
    return removed


def project_stem(kind: str, project_pk: int, created_at) -> str:
    """The start of the name of a project's files of ``kind``: the database, the project
    and its creation (which tells it from an earlier project that had its pk). Dots, not
    dashes: no pattern of a run's files (``{database}-{run}-…``) matches it."""
    created = int(created_at.timestamp() * 1_000_000)
    return f"{kind}.{database_key()}.{project_pk}.{created}"


def prune_project_files(kind: str) -> int:
    """Delete this database's files of ``kind`` (``project_stem``) of projects that no
    longer exist; how many."""
    from annotator.models import Project

    if not folder().is_dir():
        return 0
    paths = list(folder().glob(f"{kind}.{database_key()}.*.npy"))
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


def json_array(value) -> np.ndarray:
    """A JSON value as an array of its UTF-8 bytes, to keep among other arrays."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True).encode()
    return np.frombuffer(text, dtype=np.uint8)


def json_of(array: np.ndarray | None):
    """The JSON value ``json_array`` made ``array`` of; None when it holds none."""
    if array is None or array.dtype != np.uint8:
        return None
    try:
        return json.loads(array.tobytes().decode())
    except ValueError:
        return None


def write_json(path: Path, value) -> bool:
    """Keep a JSON value in ``path`` (as ``write_arrays`` does, with its checksum)."""
    return write_arrays(path, [json_array(value)])


def read_json(path: Path):
    """The JSON value kept in ``path``; None when there is none or it cannot be read."""
    arrays = read_arrays(path, 1)
    return None if arrays is None else json_of(arrays[0])


def keep_latest(path: Path, stem: str) -> None:
    """Delete the files named ``{stem}.*.npy`` other than ``path``."""
    for other in path.parent.glob(f"{stem}.*.npy"):
        if other != path:
            other.unlink(missing_ok=True)
