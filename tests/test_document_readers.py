"""What each kind of document file gives: the text a reader sees, exactly, from files made
for the purpose (``tests/files/documents/make_documents.py`` writes them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from formats.documents.extract import ReadOptions, extract

FILES = Path(__file__).parent / "files" / "documents"

DOCX_BODY = (
    "Pump handbook\n"
    "Read this before the first start.\n"
    "Owner: Plant 7\n"  # a block content control
    "Serial number SN-0042.\n"  # an inline content control; the footnote mark is no text
    "Torque is 25 Nm\n"  # the deleted "30" is not shown
    "R0C0\tR0C1\tR0C2\n"
    "R1C0\t\tR1C2\n"  # the empty cell keeps its column
    "OUTER-A\t\tOUTER-C\n"  # the table inside the middle cell follows its row, once
    "INNER-X\tINNER-Y\n"
    "See the box.\n"
    "BOX TEXT\n"  # the text box once, not its fallback copy as well
    "Drain the casing in winter.\n"
    "FOOTNOTE: made in 2024.\n"
    "ENDNOTE: see ISO 2858."
)


def read(name: str, **options):
    return extract(FILES / name, name, options=ReadOptions(**options))


def test_docx_everything_a_reader_sees_once_notes_after_the_body():
    result = read("handbook.docx")
    assert result.text == DOCX_BODY
    assert result.title == "Pump handbook"
    assert result.page_starts == []


def test_docx_headers_and_footers_when_asked():
    result = read("handbook.docx", docx_headers=True)
    assert result.text == DOCX_BODY + "\nHEADER Acme pumps\nFOOTER page"
    assert result.metadata["extraction"] == {"html": "main content", "docx_headers": True}


def test_html_main_content_as_a_reader_sees_it():
    result = read("page.html")
    assert result.text == (
        "Safety notes\n\n"
        "Always check the seal before starting the pump.\n\n"
        "Temperatures\n\n"
        "Oil: at most 80 °C.\n"
        "Water: at most 60 °C.\n\n"
        "Part\tTorque\tNote\n"
        "Bolt M8\t\tcheck\n\n"
        "pump start --slow\n"
        "  pump stop\n\n"
        "Drain the casing in winter."
    )
    assert result.title == "Pump safety notes"


def test_html_whole_page_keeps_the_chrome_but_nothing_hidden():
    result = read("page.html", html_whole_page=True)
    assert result.text == (
        "LOGO Acme\n\n"
        "NAVLINK Home\n"
        "NAVLINK Products\n\n"
        "Safety notes\n\n"
        "Always check the seal before starting the pump.\n\n"
        "Temperatures\n\n"
        "Oil: at most 80 °C.\n"
        "Water: at most 60 °C.\n\n"
        "Part\tTorque\tNote\n"
        "Bolt M8\t\tcheck\n\n"
        "pump start --slow\n"
        "  pump stop\n\n"
        "Drain the casing in winter.\n\n"
        "ASIDE Related: valves\n\n"
        "FOOTER © 2024 Acme"
    )


def test_sphinx_page_without_navigation_search_or_permalinks():
    result = read("sphinx.html")
    assert result.text == (
        "Seals\n\n"
        "Replace the seal every 2000 hours.\n\n"
        "$ pump seal --check\n"
        "seal ok\n\n"
        "Lip seal\n\n"
        "For low pressure."
    )
    assert result.title == "Seals — Pump manual 1.0 documentation"


def test_markdown_as_plain_text_raw_html_through_the_html_reader():
    result = read("notes.md")
    assert result.text == (
        "Safety notes\n\n"
        "build\n\n"  # the badge: its image's alt text
        "Keep the oil below 80 °C and read the manual. Second line of the same paragraph.\n\n"
        "Check the seal\n"
        "Drain the casing\n"
        "Open the valve\n"
        "Wait\n\n"
        "Part\tTorque\n"
        "Bolt M8\t25 Nm\n"
        "\tempty part\n\n"
        "pump start --slow\n"
        "  pump stop\n\n"
        "Pump diagram\n\n"
        "Raw HTML note.\n\n"
        "Quoted old text."
    )
    assert result.title == "Safety notes"


@pytest.mark.parametrize("name", ["handbook.docx", "page.html", "sphinx.html", "notes.md"])
def test_the_made_files_are_the_ones_the_script_writes(name, tmp_path, monkeypatch):
    """The files in the repository are what ``make_documents.py`` writes (no hand edits)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_documents", FILES / "make_documents.py")
    maker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(maker)
    monkeypatch.setattr(maker, "HERE", tmp_path)
    maker.main()
    assert (tmp_path / name).read_bytes() == (FILES / name).read_bytes()


def test_html_main_inside_a_main_role_is_read_once_and_deep_nesting_is_no_problem():
    from formats.documents.html import html_text

    text, _ = html_text('<div role="main"><main><p>Once.</p></main></div><p>Outside.</p>')
    assert text == "Once."
    deep = "<div>" * 20_000 + "Deep text." + "</div>" * 20_000
    assert html_text(f"<body>{deep}</body>")[0] == "Deep text."


def test_an_html_page_without_a_charset_that_is_not_utf8_is_read_as_browsers_do(tmp_path):
    """libxslt's own documentation page: Latin-1 bytes, no charset declared."""
    page = tmp_path / "xslt.html"
    page.write_bytes(b"<html><head><title>XSLT</title></head><p>typos (Jan Pokorn\xfd)</p></html>")
    assert extract(page, "xslt.html").text == "typos (Jan Pokorný)"
