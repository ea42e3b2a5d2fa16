"""What the apps above add to the labelling screens' cards, and the undo of their actions.

- A card part: HTML drawn inside every candidate card (and in the document view's
  toolbar) by its ``draw(context)`` from the context its ``build(screen=…, documents=[pk,
  …])`` gives each document (by pk; a document left out gets nothing). One call builds a
  whole page of cards. ``draw`` is Python, not an included template: a screen draws up to
  155 cards, and a template per card cost about a millisecond each.
- An undoer: the undo key posts the id of the person's last action to the judging address;
  when that action changed no relevance label, each undoer is asked in turn
  (``undo(screen=…, action_id=…)``) and the first that knows the action reverses it,
  answering what to tell the person and which event the screen's regions listen for.

The quality app registers both (a second row of keys grading the source of each card).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from django.db.models import Expression
from django.utils.safestring import SafeString


@dataclass(frozen=True)
class CardPart:
    draw: Callable[[dict], SafeString]
    build: Callable[..., dict[int, dict]]
    # An expression over the membership row that is false when the part draws nothing
    # in its project; read with the screen's membership, so that the part is not even
    # asked then.
    drawn_in: Callable[[], Expression] | None = None

    @property
    def flag(self) -> str:
        return f"card_part_{_PARTS.index(self)}"


@dataclass(frozen=True)
class Undone:
    """What an undoer did: the message for the status line (``error``: refused, nothing
    undone) and the events (name → detail) the answer sends to the screen."""

    message: str
    events: dict[str, dict] = field(default_factory=dict)
    error: bool = False


_PARTS: list[CardPart] = []
_UNDOERS: list[Callable[..., Undone | None]] = []


def register_card_part(
    draw: Callable[[dict], SafeString],
    build: Callable[..., dict[int, dict]],
    drawn_in: Callable[[], Expression] | None = None,
) -> None:
    """Add ``draw(context)`` to every card whose document ``build`` gives a context (once
    per ``draw``). ``drawn_in()``: an expression over the membership row, false when
    ``build`` gives nothing in its project (an EXISTS), read with the membership so that
    ``build`` is not called there."""
    if all(part.draw is not draw for part in _PARTS):
        _PARTS.append(CardPart(draw, build, drawn_in))


def card_part_flags() -> dict[str, Expression]:
    """The annotations of a membership read that say which card parts its project draws
    (``get_project_for_user``'s ``annotations``)."""
    return {part.flag: part.drawn_in() for part in _PARTS if part.drawn_in is not None}


def card_parts(screen, document_pks) -> dict[int, list[SafeString]]:
    """The parts each document's cards show (their HTML), by document pk, in registration
    order."""
    pks = sorted(set(document_pks))
    drawn: dict[int, list[SafeString]] = {}
    if not pks:
        return drawn
    for part in _PARTS:
        if not getattr(screen.membership, part.flag, True):
            continue  # the membership read says the project has nothing for it
        for pk, context in part.build(screen=screen, documents=pks).items():
            drawn.setdefault(pk, []).append(part.draw(context))
    return drawn


def register_undoer(undo: Callable[..., Undone | None]) -> None:
    """Ask ``undo(screen=…, action_id=…)`` to reverse actions that changed no label."""
    if undo not in _UNDOERS:
        _UNDOERS.append(undo)


def undo_elsewhere(screen, action_id: str) -> Undone | None:
    """The first undoer's answer for ``action_id``, or None when none knows it."""
    if not action_id:
        return None
    for undo in _UNDOERS:
        undone = undo(screen=screen, action_id=action_id)
        if undone is not None:
            return undone
    return None
