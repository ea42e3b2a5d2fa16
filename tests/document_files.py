"""Real document files for tests, written by independent writers (reportlab, python-docx)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import docx
from docx.enum.text import WD_BREAK
from reportlab.lib.pdfencrypt import StandardEncryption
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.cidfonts import UnicodeCIDFont
from reportlab.pdfgen import canvas

CJK_FONT = "STSong-Light"
pdfmetrics.registerFont(UnicodeCIDFont(CJK_FONT))


def write_pdf(
    path: Path,
    pages: list[list[str]],
    *,
    title: str | None = None,
    chinese: bool = False,
    password: str | None = None,
) -> Path:
    """A PDF whose page i holds the lines ``pages[i]``, one under the other."""
    encrypt = StandardEncryption(password, ownerPassword=password) if password else None
    pdf = canvas.Canvas(str(path), encrypt=encrypt)
    if title:
        pdf.setTitle(title)
    for lines in pages:
        pdf.setFont(CJK_FONT if chinese else "Helvetica", 12)
        for number, line in enumerate(lines):
            pdf.drawString(72, 760 - 20 * number, line)
        pdf.showPage()
    pdf.save()
    return path


def write_image_only_pdf(path: Path, n_pages: int = 2) -> Path:
    """A PDF with drawings and no text layer, as a scan would be."""
    pdf = canvas.Canvas(str(path))
    for _ in range(n_pages):
        pdf.rect(72, 600, 300, 100, fill=1)
        pdf.showPage()
    pdf.save()
    return path


def write_docx(path: Path, pages: list[list[str]], *, heading: str | None = None) -> Path:
    """A Word file with an explicit page break between ``pages``, each a list of paragraphs."""
    document = docx.Document()
    if heading:
        document.add_heading(heading, level=1)
    for number, paragraphs in enumerate(pages):
        for text in paragraphs:
            document.add_paragraph(text)
        if number < len(pages) - 1:
            document.paragraphs[-1].add_run().add_break(WD_BREAK.PAGE)
    document.save(str(path))
    return path


def write_zip(path: Path, members: dict[str, bytes | Path]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in members.items():
            data = content.read_bytes() if isinstance(content, Path) else content
            archive.writestr(name, data)
    return path
