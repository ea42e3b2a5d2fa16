"""Problems with an incoming file as data: a code and its values, one exception, one collector.

A problem is ``Problem(code, params)``. Each code is registered once, where it is raised,
with its English template (``%(name)s`` values)::

    MISSING = define("rows.missing", gettext_noop("missing %(what)s"))
    errors.add(line, MISSING(what="doc_id"))          # or raise FileRejected([MISSING(...)])

``gettext_noop`` only marks the template for the catalogue (makemessages finds it by that
name); formats/ knows no Django, so nothing is translated here. A problem is said in
English by ``str(problem)`` (commands, logs, tests) and in the user's language by
``annotator.problems.shown`` (pages, API), which looks the template up by code. A value
may itself be a problem (``LINE(line=3, problem=MISSING(what="qid"))``): it is said in
the same language. Problems travel as JSON (``as_json`` / ``from_json``).

A template that counts something has a plural form too, chosen by its ``n`` value (one
line, two lines; the language's own rule when translated)::

    DROPPED = define("run.dropped", gettext_noop("%(n)s line dropped"),
                     plural=gettext_noop("%(n)s lines dropped"))
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

MAX_REPORTED = 200

# Every code's English template, registered by ``define``.
TEMPLATES: dict[str, str] = {}
# The English plural template of the codes that count (their ``n``), by code.
PLURALS: dict[str, str] = {}


def gettext_noop(template: str) -> str:
    """Mark an English template for the catalogue (it is translated when shown)."""
    return template


@dataclass(frozen=True)
class Problem:
    """One problem: a registered ``code`` and the values its template names."""

    code: str
    params: Mapping[str, object] = field(default_factory=dict, hash=False)

    def __str__(self) -> str:
        return render(self)

    def as_json(self) -> dict:
        """``{"code", "params"}``, a value that is a problem nested the same way."""
        params = {
            name: value.as_json() if isinstance(value, Problem) else value
            for name, value in self.params.items()
        }
        return {"code": self.code, "params": params}

    @classmethod
    def from_json(cls, data) -> Problem:
        """The problem ``as_json`` wrote; any other stored value (old free text) becomes a
        ``text`` problem shown as it is."""
        if not isinstance(data, dict) or not isinstance(data.get("code"), str):
            return TEXT(text=str(data))
        params = data.get("params") if isinstance(data.get("params"), dict) else {}
        return cls(
            data["code"],
            {
                name: cls.from_json(value) if isinstance(value, dict) else value
                for name, value in params.items()
            },
        )


@dataclass(frozen=True)
class Kind:
    """A registered code: calling it with the template's values makes the problem."""

    code: str
    template: str
    plural: str | None = None

    def __call__(self, **params: object) -> Problem:
        return Problem(self.code, params)


def define(code: str, template: str, *, plural: str | None = None) -> Kind:
    """Register ``code`` with its English ``template`` (pass it through ``gettext_noop``);
    ``plural``: the template when the problem's ``n`` is not 1."""
    if TEMPLATES.setdefault(code, template) != template or PLURALS.get(code, plural) != plural:
        raise ValueError(f"problem code {code!r} is registered with another template")
    if plural is not None:
        PLURALS[code] = plural
    return Kind(code, template, plural)


def _count(value) -> int:
    """The number a counting problem's ``n`` holds (read back from JSON, it may be text)."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return 2


def render(
    problem: Problem,
    translate: Callable[[str], str] = lambda text: text,
    translate_plural: Callable[[str, str, int], str] | None = None,
) -> str:
    """The problem in words: its template (through ``translate``, or ``translate_plural``
    for a template with a plural form: ngettext's arguments) filled with its values, each
    value that is a problem rendered the same way. An unknown code is shown with its
    values rather than lost."""
    values = {
        name: render(value, translate, translate_plural) if isinstance(value, Problem) else value
        for name, value in problem.params.items()
    }
    template = TEMPLATES.get(problem.code)
    if template is None:
        return f"{problem.code} {values}" if values else problem.code
    plural = PLURALS.get(problem.code)
    if plural is not None:
        n = _count(problem.params.get("n"))
        english = template if n == 1 else plural
        said = translate_plural(template, plural, n) if translate_plural else english
    else:
        english, said = template, translate(template)
    try:
        return said % values
    except (KeyError, TypeError, ValueError):  # a translation or stored row that lost a value
        return english % values if _fills(english, values) else f"{problem.code} {values}"


def _fills(template: str, values: Mapping) -> bool:
    try:
        template % values
    except (KeyError, TypeError, ValueError):
        return False
    return True


# Free text kept as it is: rows stored before problems were data, and names (a run's,
# a chunking's) that an import reports. Nothing to translate.
TEXT = define("text", "%(text)s")
LINE = define("line", gettext_noop("line %(line)s: %(problem)s"))
MORE = define(
    "more",
    gettext_noop("… and %(n)s more problem"),
    plural=gettext_noop("… and %(n)s more problems"),
)
FILE = define("file", gettext_noop("%(name)s: %(problem)s"))
PAGE = define("page", gettext_noop("%(name)s, page %(page)s: %(problem)s"))


def of_file(name: str, problem: Problem, page: int | None = None) -> Problem:
    """A problem of one file (or of one page of it), worded as ``name: problem``."""
    if page is None:
        return FILE(name=name, problem=problem)
    return PAGE(name=name, page=page, problem=problem)


class FileRejected(Exception):
    """Nothing was written; ``problems`` lists each problem, most of them ``LINE``s.

    ``errors`` says them in English. ``source`` names the file when a caller reads
    several (``evaluate`` reads two)."""

    def __init__(self, problems: Iterable[Problem], *, source: str = ""):
        self.problems = list(problems)
        for problem in self.problems:
            if not isinstance(problem, Problem):
                raise TypeError(f"FileRejected takes problems (formats.errors), not {problem!r}")
        super().__init__("\n".join(self.errors))
        self.source = source

    @property
    def errors(self) -> list[str]:
        return [str(problem) for problem in self.problems]


@dataclass(frozen=True)
class BadLine:
    """A line a reader could not turn into a row (malformed JSON, wrong columns…)."""

    problem: Problem


class LineErrors:
    """Collects problems by line; reports the ``MAX_REPORTED`` lowest lines, counts the rest.

    Line 0 is the whole file: its problem is reported without a line number, first."""

    def __init__(self) -> None:
        self.count = 0
        # A max-heap on (line, order of arrival) of the problems kept so far.
        self._kept: list[tuple[int, int, Problem]] = []

    def add(self, line: int, problem: Problem) -> None:
        if not isinstance(problem, Problem):
            raise TypeError(f"LineErrors takes problems (formats.errors), not {problem!r}")
        self.count += 1
        entry = (-int(line), -self.count, problem)
        if len(self._kept) < MAX_REPORTED:
            heapq.heappush(self._kept, entry)
        elif entry[:2] > self._kept[0][:2]:  # an earlier line than the latest one kept
            heapq.heapreplace(self._kept, entry)

    def add_each(self, lines: Sequence[int], problem: Callable[[int], Problem]) -> None:
        """One problem on each of ``lines`` (ascending, e.g. a numpy array); ``problem(i)``
        is the problem of ``lines[i]``, asked only for lines that are reported."""
        shown = lines[:MAX_REPORTED]
        for position, line in enumerate(shown):
            self.add(int(line), problem(position))
        self.count += len(lines) - len(shown)

    def __bool__(self) -> bool:
        return self.count > 0

    def problems(self) -> list[Problem]:
        kept = sorted((-line, -order, problem) for line, order, problem in self._kept)
        report = [
            LINE(line=line, problem=problem) if line else problem for line, _, problem in kept
        ]
        if self.count > len(report):
            report.append(MORE(n=self.count - len(report)))
        return report

    def raise_if_any(self, *, source: str = "") -> None:
        if self.count:
            raise FileRejected(self.problems(), source=source)
