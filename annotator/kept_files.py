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
import logging
import os
import tempfile
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


def write_arrays(path: Path, arrays: list) -> None:
    """Keep ``arrays`` in ``path``, one ``.npy`` after another (written aside, then
    renamed). A file that cannot be written is logged and skipped: it is only a cache."""
    temporary = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(
            dir=path.parent, prefix=".", suffix=".part", delete=False
        ) as handle:
            temporary = Path(handle.name)
            for array in arrays:
                np.save(handle, array, allow_pickle=False)
        os.replace(temporary, path)
    except OSError as error:
        log.warning("file %s not kept: %s", path.name, error)
        if temporary is not None:
            temporary.unlink(missing_ok=True)


def read_arrays(path: Path, count: int) -> list[np.ndarray] | None:
    """The ``count`` arrays kept in ``path``; None when there is no such file or it cannot
    be read (logged)."""
    try:
        with open(path, "rb") as handle:
            return [np.load(handle, allow_pickle=False) for _ in range(count)]
    except FileNotFoundError:
        return None
    except (OSError, ValueError, EOFError) as error:
        log.warning("file %s unreadable (%s): building it again", path.name, error)
        return None
