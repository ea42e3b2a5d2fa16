"""Making a chunking of a project's documents with the window chunker, pages respected or not."""

from __future__ import annotations

from .chunker import window_spans
from .importing import ImportResult, import_chunks
from .models import Project


def chunking_name(size: int, overlap: int, *, by_page: bool = False) -> str:
    return f"tokens-{size}-{overlap}" + ("-pages" if by_page else "")


def create_window_chunking(
    project: Project,
    *,
    size: int,
    overlap: int,
    by_page: bool = False,
    name: str | None = None,
) -> ImportResult:
    """A new chunking of every document in windows of ``size`` tokens; with ``by_page`` no
    chunk crosses a page break (documents without pages are windowed whole). All or
    nothing, through the same path as an imported chunking."""
    if size < 1 or not 0 <= overlap < size:
        raise ValueError("need size >= 1 and 0 <= overlap < size")
    parameters = {"size": size, "overlap": overlap, "unit": "token", "by_page": by_page}

    def rows():
        number = 0
        documents = project.documents.values_list("doc_id", "text", "page_starts")
        for doc_id, text, page_starts in documents.iterator():
            pages = page_starts if by_page else None
            for index, (start, end) in enumerate(
                window_spans(text, size, overlap, page_starts=pages)
            ):
                number += 1
                yield (
                    number,
                    {"chunk_id": f"{doc_id}#{index}", "doc_id": doc_id, "start": start, "end": end},
                )

    return import_chunks(
        project,
        rows(),
        chunking=name or chunking_name(size, overlap, by_page=by_page),
        parameters=parameters,
    )
