# ruff: noqa: E501  (the files' own lines, as they are written)
"""Writes the document files of this folder, each made for one test of what a reader sees.

Run from the repository's root: ``.venv/bin/python tests/files/documents/make_documents.py``.
The Word file is written as raw WordprocessingML (the XML Word itself saves), so that it
holds what python-docx cannot write: content controls, a table inside a table, empty
cells, footnotes, endnotes, a text box with the fallback copy Word keeps, headers and
footers. The HTML and Markdown files are plain text written here.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
NAMESPACES = (
    f"{W} "
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" '
    'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
    'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" '
    'xmlns:v="urn:schemas-microsoft-com:vml" mc:Ignorable="wps"'
)


def p(text: str, style: str = "") -> str:
    props = f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else ""
    return f'<w:p>{props}<w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:p>'


def cell(*blocks: str) -> str:
    return f"<w:tc>{''.join(blocks) or '<w:p/>'}</w:tc>"


def table(*rows: list[str]) -> str:
    return "<w:tbl>" + "".join(f"<w:tr>{''.join(r)}</w:tr>" for r in rows) + "</w:tbl>"


def textbox(text: str) -> str:
    """A text box as Word saves it: the shape, and a VML copy for old readers."""
    content = f"<w:txbxContent>{p(text)}</w:txbxContent>"
    return (
        "<w:r><mc:AlternateContent>"
        f'<mc:Choice Requires="wps"><w:drawing><wps:txbx>{content}</wps:txbx></w:drawing>'
        "</mc:Choice>"
        f"<mc:Fallback><w:pict><v:textbox>{content}</v:textbox></w:pict></mc:Fallback>"
        "</mc:AlternateContent></w:r>"
    )


BODY = "".join(
    [
        p("Pump handbook", "Title"),
        p("Read this before the first start."),
        # A block content control (a form field Word shows as ordinary text).
        '<w:sdt><w:sdtPr><w:alias w:val="Owner"/></w:sdtPr><w:sdtContent>'
        + p("Owner: Plant 7")
        + "</w:sdtContent></w:sdt>",
        # An inline content control inside a paragraph.
        '<w:p><w:r><w:t xml:space="preserve">Serial number </w:t></w:r>'
        "<w:sdt><w:sdtPr><w:showingPlcHdr/></w:sdtPr><w:sdtContent>"
        "<w:r><w:t>SN-0042</w:t></w:r></w:sdtContent></w:sdt>"
        '<w:r><w:footnoteReference w:id="1"/></w:r><w:r><w:t>.</w:t></w:r></w:p>',
        # Deleted text (a tracked change) is not what a reader sees.
        '<w:p><w:r><w:t xml:space="preserve">Torque is </w:t></w:r>'
        "<w:del><w:r><w:delText>30</w:delText></w:r></w:del>"
        '<w:r><w:t xml:space="preserve">25 Nm</w:t></w:r>'
        '<w:r><w:endnoteReference w:id="1"/></w:r></w:p>',
        # A table: an empty cell in the middle, a table inside the second row.
        table(
            [cell(p("R0C0")), cell(p("R0C1")), cell(p("R0C2"))],
            [cell(p("R1C0")), cell(), cell(p("R1C2"))],
            [
                cell(p("OUTER-A")),
                cell(table([cell(p("INNER-X")), cell(p("INNER-Y"))])),
                cell(p("OUTER-C")),
            ],
        ),
        '<w:p><w:r><w:t xml:space="preserve">See the box. </w:t></w:r>'
        + textbox("BOX TEXT")
        + "</w:p>",
        p("Drain the casing in winter."),
        '<w:sectPr><w:headerReference w:type="default" r:id="rIdHeader"/>'
        '<w:footerReference w:type="default" r:id="rIdFooter"/></w:sectPr>',
    ]
)

NOTES = """<w:{kind}s {ns}>
<w:{kind} w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:{kind}>
<w:{kind} w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/></w:r></w:p></w:{kind}>
<w:{kind} w:id="1">{text}</w:{kind}>
</w:{kind}s>"""

RELS = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">{}</Relationships>"""
REL = '<Relationship Id="{}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/{}" Target="{}"/>'
TYPES = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>
<Default Extension="xml" ContentType="application/xml"/>
<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>
<Override PartName="/word/footnotes.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml"/>
<Override PartName="/word/endnotes.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.endnotes+xml"/>
<Override PartName="/word/header1.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.header+xml"/>
<Override PartName="/word/footer1.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.footer+xml"/>
</Types>"""


def write_docx(path: Path) -> None:
    parts = {
        "[Content_Types].xml": TYPES,
        "_rels/.rels": RELS.format(REL.format("rId1", "officeDocument", "word/document.xml")),
        "word/_rels/document.xml.rels": RELS.format(
            REL.format("rIdFoot", "footnotes", "footnotes.xml")
            + REL.format("rIdEnd", "endnotes", "endnotes.xml")
            + REL.format("rIdHeader", "header", "header1.xml")
            + REL.format("rIdFooter", "footer", "footer1.xml")
        ),
        "word/document.xml": f"<w:document {NAMESPACES}><w:body>{BODY}</w:body></w:document>",
        "word/footnotes.xml": NOTES.format(
            kind="footnote", ns=W, text=p("FOOTNOTE: made in 2024.")
        ),
        "word/endnotes.xml": NOTES.format(kind="endnote", ns=W, text=p("ENDNOTE: see ISO 2858.")),
        "word/header1.xml": f"<w:hdr {W}>{p('HEADER Acme pumps')}</w:hdr>",
        "word/footer1.xml": f"<w:ftr {W}>{p('FOOTER page')}</w:ftr>",
    }
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, xml in parts.items():
            archive.writestr(zipfile.ZipInfo(name, (2024, 1, 1, 0, 0, 0)), xml)


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Pump safety notes</title>
<style>.x { color: red }</style><script>var tracking = "SCRIPT TEXT";</script></head>
<body>
<header><a href="/">LOGO Acme</a></header>
<nav><ul><li><a href="/">NAVLINK Home</a></li><li><a href="/p">NAVLINK Products</a></li></ul></nav>
<main>
<article>
<h1>Safety notes</h1>
<p>Always check the <b>seal</b>
 before starting the pump.</p>
<p style="display: none">HIDDEN by style</p>
<p hidden>HIDDEN by attribute</p>
<div aria-hidden="true">HIDDEN from readers</div>
<h2>Temperatures</h2>
<ul><li>Oil: at most 80 °C.</li><li>Water: at most 60 °C.</li></ul>
<table><tr><th>Part</th><th>Torque</th><th>Note</th></tr><tr><td>Bolt M8</td><td></td><td>check</td></tr></table>
<pre>pump start --slow
  pump stop</pre>
<form><label>Search</label><input value="INPUT VALUE"><button>SUBMIT BUTTON</button>
<select><option>OPTION A</option></select></form>
<p>Drain the casing in winter.</p>
</article>
<aside>ASIDE Related: valves</aside>
</main>
<footer>FOOTER © 2024 Acme</footer>
</body></html>
"""

# The shape of a page Sphinx writes (basic theme): related bars, a sidebar, permalinks.
SPHINX = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Seals — Pump manual 1.0 documentation</title></head>
<body>
<div class="related" role="navigation" aria-label="related navigation"><h3>Navigation</h3>
<ul><li class="right"><a href="genindex.html">index</a></li><li><a href="index.html">Pump manual 1.0 documentation</a> &#187;</li></ul></div>
<div class="document"><div class="documentwrapper"><div class="bodywrapper">
<div class="body" role="main">
<section id="seals"><h1>Seals<a class="headerlink" href="#seals" title="Permalink to this heading">¶</a></h1>
<p>Replace the seal every <strong>2000 hours</strong>.</p>
<div class="highlight-console notranslate"><div class="highlight"><pre><span></span><span class="gp">$ </span>pump seal --check
<span class="go">seal ok</span>
</pre></div></div>
<dl class="simple"><dt>Lip seal</dt><dd><p>For low pressure.</p></dd></dl>
</section>
</div></div></div>
<div class="sphinxsidebar" role="navigation" aria-label="main navigation"><h3>Quick search</h3>
<form class="search" action="search.html" method="get"><input type="text" name="q"/><input type="submit" value="Go"/></form></div>
</div>
<div class="footer" role="contentinfo">&#169; Copyright 2024, Acme.</div>
</body></html>
"""

MARKDOWN = """# Safety notes

[![build](https://img.shields.io/badge/build-passing-green.svg)](https://ci.example.org)

Keep the oil below **80 °C** and read the [manual](https://example.org/manual).
Second line of the same paragraph.

- Check the seal
- Drain the casing
  1. Open the valve
  2. Wait

| Part | Torque |
|------|-------:|
| Bolt M8 | 25 Nm |
|  | empty part |

```sh
pump start --slow
  pump stop
```

![Pump diagram](pump.png)

<div class="note"><p>Raw <b>HTML</b> note.</p><script>alert("SCRIPT")</script></div>

> Quoted ~~old~~ text.
"""


def main() -> None:
    write_docx(HERE / "handbook.docx")
    (HERE / "page.html").write_text(PAGE, encoding="utf-8")
    (HERE / "sphinx.html").write_text(SPHINX, encoding="utf-8")
    (HERE / "notes.md").write_text(MARKDOWN, encoding="utf-8")


if __name__ == "__main__":
    main()
