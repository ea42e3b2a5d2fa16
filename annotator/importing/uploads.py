"""Several files uploaded at once: kept in one folder with a list of their names."""

from __future__ import annotations

import json
from pathlib import Path

from .file_sources import Source

MANIFEST = "files.json"


def save_uploads(folder: Path, uploads) -> None:
    """Write each uploaded file into ``folder`` under a number, and the list of
    (number, name it was uploaded under) beside them."""
    folder.mkdir(parents=True)
    names = []
    for number, uploaded in enumerate(uploads):
        stored = f"{number:05d}{Path(uploaded.name).suffix.lower()[:10]}"
        with (folder / stored).open("wb") as handle:
            for block in uploaded.chunks():
                handle.write(block)
        names.append([stored, Path(uploaded.name).name])
    (folder / MANIFEST).write_text(json.dumps(names))


def uploaded_sources(path: Path, name: str) -> list[Source]:
    """The files of an upload: one file under the name it was uploaded under, or a
    folder of several (``save_uploads``)."""
    path = Path(path)
    if not path.is_dir():
        return [Source(path, name)]
    names = json.loads((path / MANIFEST).read_text())
    return [Source(path / stored, original) for stored, original in names]
