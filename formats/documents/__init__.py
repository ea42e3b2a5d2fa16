"""Document files (PDF, DOCX, HTML, Markdown, text, .zip of them) turned into text and pages.

``extract(path, name, limits)`` returns an ``Extracted``: the text, the offsets where its
pages start, a title (from the file's metadata or first heading) and metadata (file name,
size, SHA-256, page count, producer). Every problem is a ``FileRejected`` whose messages
start with the file's name (and page where one applies). ``unpack`` opens a .zip safely.
No Django: usable from a notebook.
"""

from . import docx  # noqa: F401  (registers its problems' codes)
from .archive import ArchiveLimits, unpack
from .extract import DOCUMENT_TYPES, Extracted, Limits, document_type, extract, sha256_of
from .pdf import char_boxes, page_size, render_page, render_scale

__all__ = [
    "DOCUMENT_TYPES",
    "ArchiveLimits",
    "Extracted",
    "Limits",
    "char_boxes",
    "document_type",
    "extract",
    "page_size",
    "render_page",
    "render_scale",
    "sha256_of",
    "unpack",
]
