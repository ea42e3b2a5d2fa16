"""File downloads: one place that names attachments safely."""

from __future__ import annotations

from django.http import HttpResponse


def safe_filename(name: str) -> str:
    """Letters, digits, '-', '_' and '.' kept; anything else (quotes, slashes) becomes '-'."""
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in name)


def attachment(content: str | bytes, content_type: str, filename: str) -> HttpResponse:
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{safe_filename(filename)}"'
    return response
