"""File downloads: one place that names attachments safely."""

from __future__ import annotations

import json

from django.http import HttpResponse


def safe_filename(name: str) -> str:
    """Letters, digits, '-', '_' and '.' kept; anything else (quotes, slashes) becomes '-'."""
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in name)


def attachment(
    content: str | bytes, content_type: str, filename: str, *, policy: dict | None = None
) -> HttpResponse:
    """A file download; ``policy`` (how its grades were made) goes into the ``Assay-Policy``
    header as JSON, for formats with no room for it such as TREC qrels."""
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{safe_filename(filename)}"'
    if policy is not None:
        response["Assay-Policy"] = json.dumps(policy, sort_keys=True)  # ASCII: \u escapes
    return response
