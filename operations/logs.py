"""Log records as operators want them: a refused request (403) is one line, not a traceback."""

from __future__ import annotations

import logging


class RefusalsInOneLine(logging.Filter):
    """Drops the traceback Django attaches to "Forbidden (Permission denied)": a member
    without the role, or an outsider, is the access rule working, and a log full of
    tracebacks hides the real faults."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", None) == 403 and record.exc_info:
            record.exc_info = None
            record.exc_text = None
        return True
