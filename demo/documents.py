"""The third demo project: PDFs the demo writes itself from public-domain text, with pages.

The Constitution of the United States (data/demo/constitution) is laid out into PDFs at
run time (``pdfgen``) and imported through the same path as an uploaded PDF, so the page
view, page images and page evidence can be tried at once. Idempotent, like the others.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from django.db import transaction

from annotator.assignments import assign_each
from annotator.chunking import chunking_name, create_window_chunking
from annotator.importing import import_queries
from annotator.importing.files import Source, import_files
from annotator.models import Chunking, Membership, Project, Role
from formats import RowSource
from metrics.baseline import bm25_run
from metrics.models import Run

from .pdfgen import layout, text_blocks, write_pdf

SLUG = "constitution"
NAME = "US Constitution (PDF)"
DESCRIPTION = (
    "The Constitution of the United States and the Bill of Rights as three PDFs the demo "
    "generates from public-domain text: page images, page and passage evidence. English."
)
PDFS = [
    ("article-1.txt", "constitution-article-1.pdf", "The Constitution: Preamble and Article I"),
    ("articles-2-7.txt", "constitution-articles-2-7.pdf", "The Constitution: Articles II-VII"),
    ("bill-of-rights.txt", "bill-of-rights.pdf", "The Bill of Rights: Amendments I-X"),
]
CHUNK_SIZE, CHUNK_OVERLAP = 128, 16


def build_pdf_project(
    folder: Path, users: dict, roles: list[tuple[str, str]], say: Callable[[str], None]
) -> Project:
    """Create (or complete) the PDF demo project from the texts in ``folder``."""
    with transaction.atomic():
        project, _ = Project.objects.get_or_create(
            slug=SLUG, defaults={"name": NAME, "description": DESCRIPTION}
        )
        for username, role in roles:
            Membership.objects.get_or_create(
                project=project, user=users[username], defaults={"role": role}
            )
    if not project.documents.exists():
        with tempfile.TemporaryDirectory(prefix="assay-demo-pdf-") as scratch:
            sources = [
                Source(pdf_from_text(folder / text, Path(scratch) / name, title), name)
                for text, name, title in PDFS
            ]
            result = import_files(project, sources)
        say(f"{project.slug}: {result.created} documents from generated PDFs")
    if not project.queries.exists():
        result = import_queries(project, RowSource(folder / "queries.jsonl", "jsonl"))
        say(f"{project.slug}: {result.created} queries")
    name = chunking_name(CHUNK_SIZE, CHUNK_OVERLAP, by_page=True)
    chunking = Chunking.objects.filter(project=project, name=name).first()
    if chunking is None:
        result = create_window_chunking(
            project, size=CHUNK_SIZE, overlap=CHUNK_OVERLAP, by_page=True
        )
        say(f"{project.slug}: {result.created} chunks in {name} (never across a page)")
        chunking = Chunking.objects.get(project=project, name=name)
    if not Run.objects.filter(project=project, chunking=chunking).exists():
        run = bm25_run(project, chunking=chunking)
        say(f"{project.slug}: run {run.name}, {run.n_results} results")
    if not project.assignments.exists():
        annotators = [users[u].pk for u, role in roles if role == Role.ANNOTATOR]
        queries = list(project.queries.order_by("pk").values_list("pk", flat=True))
        assign_each(project, queries, annotators, users[roles[0][0]])
    return project


def pdf_from_text(source: Path, target: Path, title: str) -> Path:
    """A PDF of a plain-text file: paragraphs wrapped, short lines as headings."""
    pages = layout(text_blocks(source.read_text(encoding="utf-8")))
    return write_pdf(target, pages, title=title)
