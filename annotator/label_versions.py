"""Label versions: a save carrying an outdated version of its label is refused."""

from __future__ import annotations

from datetime import datetime

from .models import Judgment

# The version a screen saw of a label it shows: NO_LABEL when there was none, else the
# time of the label's last change (``label_version``). A save that carries it is refused
# when the label changed since (another tab, another device): last writer does not win.
NO_LABEL = "none"


def label_version(updated_at: datetime | None) -> str:
    """The version token of a label last changed at ``updated_at`` (None: no label)."""
    return NO_LABEL if updated_at is None else updated_at.isoformat()


class LabelConflict(Exception):
    """The label changed since the screen that sends this save showed it; nothing saved.

    ``judgment`` is the label as it is now (None once removed); ``evidence`` what it is
    on, when the save did not name it (an undo names a logged change)."""

    def __init__(self, judgment: Judgment | None, evidence=None):
        super().__init__("the label changed since it was shown")
        self.judgment = judgment
        self.evidence = evidence


def check_version(judgment: Judgment | None, expected: str | None, grade, note) -> None:
    """Raise ``LabelConflict`` when ``expected`` is not ``judgment``'s version, unless the
    save asks for what the label already holds (or removes what is gone)."""
    if expected is None:
        return  # imports, the API, judges: no version, no check
    if label_version(judgment.updated_at if judgment else None) == expected:
        return
    if grade is None and judgment is None:
        return  # removing what is already gone
    if judgment is not None and judgment.grade == grade and note in (None, judgment.note):
        return  # the other session saved what this one asks for
    raise LabelConflict(judgment)
