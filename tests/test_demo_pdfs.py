"""The PDF demo: the demo's own PDF writer round-trips through PDFium; the project builds."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotator.models import Chunk, Membership, Role
from demo.documents import PDFS, build_pdf_project, pdf_from_text
from demo.loading import DEMO_DIR
from demo.pdfgen import layout, write_pdf
from formats.documents import extract
from tests.conftest import make_user

# Words of three characters or more: PDFium joins two lines that each hold one or two
# glyphs into one (its line detection needs some width), which prose never meets. No "-":
# PDFium joins a line ending in a hyphen to the next (it undoes hyphenation).
WORDS = st.text(alphabet=st.sampled_from(list("abcXYZ019().,;:\\'\"é—")), min_size=3, max_size=12)
PARAGRAPHS = st.lists(
    st.tuples(st.lists(WORDS, min_size=1, max_size=40).map(" ".join), st.booleans()),
    min_size=1,
    max_size=30,
)


@settings(max_examples=25, deadline=None)
@given(PARAGRAPHS)
def test_written_pdfs_read_back_line_for_line_page_for_page(tmp_path_factory, blocks):
    pages = layout(blocks)
    path = write_pdf(tmp_path_factory.mktemp("pdf") / "t.pdf", pages, title="T (1)")
    result = extract(path, "t.pdf")
    assert result.title == "T (1)"
    assert len(result.page_starts) == len(pages)
    bounds = [*result.page_starts, len(result.text) + 2]
    for number, page in enumerate(pages):
        text = result.text[bounds[number] : bounds[number + 1] - 2]
        assert text.split("\n") == [line.text for line in page if line.text]


def test_demo_texts_become_pdfs_with_pages(tmp_path):
    text, name, title = PDFS[0]
    result = extract(pdf_from_text(DEMO_DIR / "constitution" / text, tmp_path / name, title), name)
    assert len(result.page_starts) >= 5 and result.title == title
    assert result.text.startswith("Preamble\nWe the People of the United States")


@pytest.mark.django_db
def test_pdf_demo_project_builds_once(tmp_path):
    users = {name: make_user(name) for name in ("o", "a1", "a2")}
    roles = [("o", Role.OWNER), ("a1", Role.ANNOTATOR), ("a2", Role.ANNOTATOR)]
    said: list[str] = []
    project = build_pdf_project(DEMO_DIR / "constitution", users, roles, said.append)
    assert project.documents.count() == 3 and project.queries.count() == 8
    for document in project.documents.all():
        assert len(document.page_starts) >= 1
        assert document.metadata["media_type"] == "application/pdf"
    chunks = Chunk.objects.filter(chunking__project=project).select_related("document")
    assert chunks.exists()
    for chunk in chunks:
        document = chunk.document
        assert document.page_of(chunk.start) == document.page_of(chunk.end - 1)
    assert project.assignments.count() == 16
    assert Membership.objects.filter(project=project).count() == 3
    again: list[str] = []
    build_pdf_project(DEMO_DIR / "constitution", users, roles, again.append)
    assert again == [] and project.documents.count() == 3
