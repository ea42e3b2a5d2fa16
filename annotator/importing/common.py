"""What every importer shares: the result, id checks, JSON cells and batched inserts."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from formats import LineErrors, Rows, cell_text, not_whole, whole_number
from formats.errors import Problem, define, gettext_noop
from formats.records import MISSING
from formats.rows import JsonRefused, load_json
from formats.values import id_problem

BATCH = 2000
# Ids looked up by key at a time: under SQLite's 999 bound variables.
LOOKUP_BATCH = 900
# Up to this many ids are read by key (at most 56 reads); more read every row once.
NAMED_IDS = 50_000
MAX_ID_LENGTH = 255
Tick = Callable[[], None] | None

__all__ = ["BATCH", "ImportResult", "Rows", "Tick"]

TOO_LONG = define("import.too_long", gettext_noop("%(what)s is longer than %(n)s characters"))
EXISTS = define("import.exists", gettext_noop("%(noun)s %(value)s already exists in this project"))
REPEATS = define("import.repeats", gettext_noop("%(noun)s %(value)s repeats line %(line)s"))
NOT_JSON = define("import.not_json", gettext_noop("%(name)s is not valid JSON"))
NOT_JSON_BECAUSE = define(
    "import.not_json_because", gettext_noop("%(name)s is not valid JSON (%(reason)s)")
)
# The nouns filled into the wording above, translated with it.
DOCUMENT = define("noun.document", gettext_noop("document"))
QUERY = define("noun.query", gettext_noop("query"))
CHUNK = define("noun.chunk", gettext_noop("chunk"))


@dataclass(frozen=True)
class ImportResult:
    """What an import wrote: how many rows, and ``notes`` on it (a name, files left
    unchanged, lines dropped, warnings), said in the reader's language when shown."""

    kind: str
    created: int
    notes: tuple[Problem, ...] = ()
    # Kinds that may set bad parts aside (document files with ``skip_bad``): how many, and
    # what became of each part (``files.FileReport``).
    skipped: int = 0
    report: tuple = ()

    @property
    def detail(self) -> str:
        """The notes in English (command output)."""
        return "; ".join(str(note) for note in self.notes)


def as_text(value) -> str:
    return "" if value is None else cell_text(value) if not isinstance(value, str) else value


def check_id(value: str | None, what: str, line: int, errors: LineErrors) -> bool:
    if value is None:
        errors.add(line, MISSING(what=what))
        return False
    if len(value) > MAX_ID_LENGTH:
        errors.add(line, TOO_LONG(what=what, n=MAX_ID_LENGTH))
        return False
    if problem := id_problem(what, value):
        errors.add(line, problem)
        return False
    return True


Item = TypeVar("Item")
Found = TypeVar("Found")


def looked_up(
    items: Iterable[Item], ids_of: Callable[[Item], object], lookup: Callable[[set], Found]
) -> Iterator[tuple[Item, Found]]:
    """Each item with what ``lookup`` found for the ids of its batch of ``LOOKUP_BATCH``
    items (``ids_of``: an item's id, or None when it names none). A file names a few of
    a project's rows: reading all of them took seconds at 1,000,000 documents."""
    items = iter(items)
    while batch := list(itertools.islice(items, LOOKUP_BATCH)):
        ids = {i for i in map(ids_of, batch) if i is not None}
        found = lookup(ids)
        for item in batch:
            yield item, found


def named_rows(queryset, column: str, ids: Collection | None, *fields: str) -> Iterator[tuple]:
    """``fields`` of the rows of ``queryset`` whose ``column`` is one of ``ids``, read by
    key ``LOOKUP_BATCH`` ids at a time; with more than ``NAMED_IDS`` ids (or None), of
    every row of ``queryset``, read once: a superset, which beats thousands of reads."""
    if ids is None or len(ids) > NAMED_IDS:
        yield from queryset.order_by().values_list(*fields)
        return
    ids = iter(ids)
    while batch := list(itertools.islice(ids, LOOKUP_BATCH)):
        yield from queryset.filter(**{f"{column}__in": batch}).order_by().values_list(*fields)


def claim_id(
    value: str,
    noun: Problem,
    line: int,
    seen: dict[str, int],
    errors: LineErrors,
    existing: set[str] = frozenset(),
) -> bool:
    """Whether ``value`` is new to the project and the file; records it as seen."""
    if value in existing:
        errors.add(line, EXISTS(noun=noun, value=repr(value)))
        return False
    if value in seen:
        errors.add(line, REPEATS(noun=noun, value=repr(value), line=seen[value]))
        return False
    seen[value] = line
    return True


def json_value(value, line: int, name: str, errors: LineErrors):
    """CSV/XLSX cells hold lists and objects as JSON text."""
    if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        try:
            return load_json(value)
        except json.JSONDecodeError:
            errors.add(line, NOT_JSON(name=name))
            return None
        except JsonRefused as error:  # NaN, too deep, a huge integer
            errors.add(line, NOT_JSON_BECAUSE(name=name, reason=error.problem))
            return None
    return value


def whole(value, line: int, name: str, errors: LineErrors) -> int | None:
    number = whole_number(value)
    if number is None:
        errors.add(line, not_whole(name, value))
    return number


def flush(model, batch: list, *, force: bool = False) -> None:
    if batch and (force or len(batch) >= BATCH):
        model.objects.bulk_create(batch, batch_size=BATCH)
        batch.clear()
