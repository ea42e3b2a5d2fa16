"""Where Assay keeps files: Django's default storage (``STORAGES["default"]``).

A folder on this machine by default (``ASSAY_DATA_DIR``: uploads waiting for the worker
under ``uploads/imports/``, originals of imported documents and their page images under
``originals/``), or S3-compatible object storage when ``ASSAY_STORAGE_URL`` is set, so
that several app servers and workers share them. Readers that need a file on disk (PDFium
opens a path; the importers read one) get ``local_copy``: the file itself for a folder,
else a copy kept under ``ASSAY_FILE_CACHE_DIR`` (stored files never change once written:
originals are named by their checksum, uploads by a random name).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import IO

from django.conf import settings
from django.core.files import File
from django.core.files.storage import FileSystemStorage, Storage, storages


def storage() -> Storage:
    return storages["default"]


def exists(name: str) -> bool:
    return storage().exists(name)


def put(name: str, content: Path | IO[bytes]) -> str:
    """Store ``content`` (a path or an open binary file) as ``name``, replacing any file
    of that name; returns the name."""
    if isinstance(content, Path):
        with content.open("rb") as handle:
            return put(name, handle)
    saved = storage().save(name, File(content, name=Path(name).name))
    if saved != name:  # a storage that renames instead of replacing would lose the file
        raise RuntimeError(f"the storage kept {name!r} as {saved!r}")
    return saved


def put_bytes(name: str, data: bytes) -> str:
    from django.core.files.base import ContentFile

    saved = storage().save(name, ContentFile(data, name=Path(name).name))
    if saved != name:
        raise RuntimeError(f"the storage kept {name!r} as {saved!r}")
    return saved


def read_bytes(name: str) -> bytes | None:
    """The file's content, or None when there is no such file."""
    try:
        with storage().open(name, "rb") as handle:
            return handle.read()
    except (FileNotFoundError, OSError):
        return None


def open_file(name: str):
    return storage().open(name, "rb")


def delete(name: str) -> None:
    storage().delete(name)


def local_copy(name: str) -> Path:
    """A path on this machine holding the stored file ``name``."""
    backend = storage()
    if isinstance(backend, FileSystemStorage):
        return Path(backend.path(name))
    cached = Path(settings.ASSAY_FILE_CACHE_DIR) / name
    if not cached.is_file():
        cached.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=cached.parent, suffix=".part")
        with os.fdopen(handle, "wb") as sink, backend.open(name, "rb") as source:
            shutil.copyfileobj(source, sink, 1024 * 1024)
        os.replace(temporary, cached)
    return cached


def forget_local_copy(name: str) -> None:
    """Drop this machine's copy of a file fetched from object storage (not the file)."""
    if not isinstance(storage(), FileSystemStorage):
        (Path(settings.ASSAY_FILE_CACHE_DIR) / name).unlink(missing_ok=True)
