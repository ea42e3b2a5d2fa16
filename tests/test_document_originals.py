"""Originals, page images and span boxes of documents imported from files."""

from __future__ import annotations

import struct

import pytest
from django.urls import reverse

from annotator import originals
from annotator.importing.files import Source, import_files
from tests.document_files import write_pdf

pytestmark = pytest.mark.django_db

PAGES = [["Cover page"], ["Second page: grading."], ["Third page: the seal must be replaced."]]


@pytest.fixture
def pdf_document(personas, settings, tmp_path):
    path = write_pdf(tmp_path / "seal.pdf", PAGES, title="Seals")
    import_files(personas["project"], [Source(path, "manuals/seal.pdf")])
    document = personas["project"].documents.get(doc_id="manuals/seal.pdf")
    return document, path


def url(name, document, **kwargs):
    return reverse(f"annotator:{name}", kwargs={"slug": "acme", "pk": document.pk, **kwargs})


def test_members_download_the_original_byte_for_byte(login, personas, pdf_document):
    document, path = pdf_document
    response = login(personas["viewer"]).get(url("document_original", document))
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == path.read_bytes()
    assert response["Content-Type"] == "application/pdf"
    assert 'filename="seal.pdf"' in response["Content-Disposition"]


def test_documents_without_a_file_have_no_original_or_images(login, personas, corpus):
    client = login(personas["owner"])
    assert client.get(url("document_original", corpus["document"])).status_code == 404
    assert client.get(url("document_page_image", corpus["document"], page=1)).status_code == 404


def test_page_image_is_a_png_rendered_once_then_cached(login, personas, pdf_document, monkeypatch):
    document, _ = pdf_document
    client = login(personas["annotator"])
    calls = []
    render = originals.render_page

    def counting(*args):
        calls.append(args[1:])
        return render(*args)

    monkeypatch.setattr(originals, "render_page", counting)
    first = client.get(url("document_page_image", document, page=2), {"width": 600})
    body = b"".join(first.streaming_content)
    assert first["Content-Type"] == "image/png" and body.startswith(b"\x89PNG")
    width, height = struct.unpack(">II", body[16:24])
    assert width == 600 and abs(height - 600 * 841.89 / 595.28) <= 1  # A4
    second = client.get(url("document_page_image", document, page=2), {"width": 600})
    assert b"".join(second.streaming_content) == body
    assert calls == [(2, 600)], "the second request is served from the cache"
    assert client.get(url("document_page_image", document, page=4)).status_code == 404
    assert client.get(url("document_page_image", document, page=1), {"width": 7}).status_code == 400


def test_span_boxes_find_a_passage_on_its_page(login, personas, pdf_document):
    document, _ = pdf_document
    start = document.text.index("the seal must")
    end = start + len("the seal must")
    response = login(personas["viewer"]).get(
        url("document_span_boxes", document), {"start": start, "end": end}
    )
    assert response.status_code == 200
    [page] = response.json()["pages"]
    assert page["page"] == 3
    [[left, top, right, bottom]] = page["boxes"]
    # drawString(72, 760): the line sits 72 pt from the left, ~82 pt from the top of 842.
    assert 72 / 595 < left < right < 0.7 and 0.08 < top < bottom < 0.12


def test_span_across_pages_gives_boxes_on_each(login, personas, pdf_document):
    document, _ = pdf_document
    start = document.text.index("grading")
    end = document.text.index("Third") + 5
    response = login(personas["viewer"]).get(
        url("document_span_boxes", document), {"start": start, "end": end}
    )
    assert [p["page"] for p in response.json()["pages"]] == [2, 3]


@pytest.mark.parametrize(
    "params", [{}, {"start": "x", "end": 3}, {"start": 5, "end": 5}, {"start": 0, "end": 10**6}]
)
def test_bad_span_parameters_are_400(login, personas, pdf_document, params):
    document, _ = pdf_document
    response = login(personas["viewer"]).get(url("document_span_boxes", document), params)
    assert response.status_code == 400


def test_page_view_shows_the_image_beside_the_text_with_saved_passages(
    login, personas, pdf_document
):
    from annotator.evidence import Evidence
    from annotator.labels import change_label

    document, _ = pdf_document
    query = personas["project"].queries.create(qid="q1", text="When is the seal replaced?")
    start = document.text.index("the seal")
    change_label(
        query=query,
        annotator=personas["annotator"],
        evidence=Evidence.for_passage(document, start, start + len("the seal")),
        grade=2,
    )
    client = login(personas["annotator"])
    base = reverse("annotator:label_query_document", args=["acme", query.pk])
    body = client.get(base, {"document": document.pk, "page": 3}).content.decode()
    image = url("document_page_image", document, page=3)
    assert f'src="{image}?width=900"' in body
    assert 'data-boxes-url="' + url("document_span_boxes", document) + '"' in body
    assert body.count('class="page-box hl g2"') == 1  # the saved passage, on the image
    assert '<input type="hidden" name="page" value="3">' in body  # grade the page by its image
    page_two = client.get(base, {"document": document.pk, "page": 2}).content.decode()
    assert f'src="{url("document_page_image", document, page=2)}?width=900"' in page_two
    assert "page-box" not in page_two


def test_document_page_shows_page_images_and_the_download_link(login, personas, pdf_document):
    document, _ = pdf_document
    body = login(personas["viewer"]).get(url("document_detail", document)).content.decode()
    assert url("document_original", document) in body
    for number in (1, 2, 3):
        assert url("document_page_image", document, page=number) + "?width=600" in body


def write_odd_pages(path):
    """A 935-byte kind of PDF: a 1 × 300 pt strip, a 100 × 4000 pt scroll and an A4 page."""
    from reportlab.pdfgen import canvas

    pdf = canvas.Canvas(str(path))
    for size, line in (((1, 300), "strip"), ((100, 4000), "scroll"), ((595.28, 841.89), "A4")):
        pdf.setPageSize(size)
        pdf.setFont("Helvetica", 1)
        pdf.drawString(0, 10, line)
        pdf.showPage()
    pdf.save()
    return path


def test_a_strip_of_a_page_is_never_drawn_and_a_long_page_is_drawn_within_the_bounds(
    login, personas, settings, tmp_path
):
    from formats.documents.pdf import MAX_RENDER_PIXELS, MAX_RENDER_SIDE

    path = write_odd_pages(tmp_path / "odd.pdf")
    result = import_files(personas["project"], [Source(path, "odd.pdf")])
    assert (
        "odd.pdf: page(s) 1 too narrow or too long to show as a picture (over 50 times as long "
        "as wide); their text is imported, their picture is not shown"
    ) in result.detail
    document = personas["project"].documents.get(doc_id="odd.pdf")
    assert document.text.split() == ["strip", "scroll", "A4"]
    client = login(personas["annotator"])
    # The strip: 1 × 300 pt at width 900 would be 900 × 270,000 pixels (2.4 GB in PDFium).
    assert (
        client.get(url("document_page_image", document, page=1), {"width": 900}).status_code == 404
    )
    assert originals.page_picture(document, 1) is None
    assert document.metadata["pages_not_drawn"] == [1]
    detail = client.get(reverse("annotator:document_detail", args=["acme", document.pk]))
    assert "/pages/1.png" not in detail.content.decode()
    assert "/pages/2.png" in detail.content.decode()
    # The scroll: 900 × 36,000 asked, drawn narrower so that it stays within both bounds.
    response = client.get(url("document_page_image", document, page=2), {"width": 1200})
    width, height = struct.unpack(">II", b"".join(response.streaming_content)[16:24])
    assert height == MAX_RENDER_SIDE and width == round(100 * MAX_RENDER_SIDE / 4000)
    assert width * height <= MAX_RENDER_PIXELS
    assert originals.page_picture(document, 2) is not None
    response = client.get(url("document_page_image", document, page=3), {"width": 600})
    assert struct.unpack(">I", b"".join(response.streaming_content)[16:20]) == (600,)
