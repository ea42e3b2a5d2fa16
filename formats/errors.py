"""Problems with an incoming file: one exception, one collector, one message style."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass

MAX_REPORTED = 200

# Every problem's English template, registered where it is defined. formats/ knows no
# Django, so nothing is translated here: a screen matches a stored problem against these
# templates and says it in the user's language (annotator/problems.py). makemessages
# finds the templates through the name ``gettext_noop``.
PROBLEMS: list[str] = []


def gettext_noop(template: str) -> str:
    """Register an English problem template (with ``%(name)s`` values) for translation."""
    PROBLEMS.append(template)
    return template


LINE = gettext_noop("line %(line)s: %(problem)s")
MORE = gettext_noop("… and %(n)s more problems")
FILE = gettext_noop("%(name)s: %(problem)s")
PAGE = gettext_noop("%(name)s, page %(page)s: %(problem)s")


def of_file(name: str, problem: str, page: int | None = None) -> str:
    """A problem of one file (or of one page of it), worded as ``name: problem``."""
    if page is None:
        return FILE % {"name": name, "problem": problem}
    return PAGE % {"name": name, "page": page, "problem": problem}


class FileRejected(Exception):
    """Nothing was written; ``errors`` lists each problem, most as ``line N: reason``.

    ``source`` names the file when a caller reads several (``evaluate`` reads two)."""

    def __init__(self, errors: list[str], *, source: str = ""):
        super().__init__("\n".join(errors))
        self.errors = list(errors)
        self.source = source


@dataclass(frozen=True)
class BadLine:
    """A line a reader could not turn into a row (malformed JSON, wrong columns…)."""

    message: str


class LineErrors:
    """Collects problems by line; reports the ``MAX_REPORTED`` lowest lines, counts the rest.

    Line 0 is the whole file: its message is reported without a line number, first."""

    def __init__(self) -> None:
        self.count = 0
        # A max-heap on (line, order of arrival) of the problems kept so far.
        self._kept: list[tuple[int, int, str]] = []

    def add(self, line: int, message: str) -> None:
        self.count += 1
        entry = (-int(line), -self.count, message)
        if len(self._kept) < MAX_REPORTED:
            heapq.heappush(self._kept, entry)
        elif entry > self._kept[0]:  # an earlier line than the latest one kept
            heapq.heapreplace(self._kept, entry)

    def add_each(self, lines: Sequence[int], message: Callable[[int], str]) -> None:
        """One problem on each of ``lines`` (ascending, e.g. a numpy array); ``message(i)``
        words the problem of ``lines[i]`` and is called only for lines that are reported."""
        shown = lines[:MAX_REPORTED]
        for position, line in enumerate(shown):
            self.add(int(line), message(position))
        self.count += len(lines) - len(shown)

    def __bool__(self) -> bool:
        return self.count > 0

    def messages(self) -> list[str]:
        kept = sorted((-line, -order, message) for line, order, message in self._kept)
        report = [
            LINE % {"line": line, "problem": message} if line else message
            for line, _, message in kept
        ]
        if self.count > len(report):
            report.append(MORE % {"n": self.count - len(report)})
        return report

    def raise_if_any(self, *, source: str = "") -> None:
        if self.count:
            raise FileRejected(self.messages(), source=source)
