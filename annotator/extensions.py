"""The annotator's extension points, in one place: what the apps above add to it.

Annotator sits below the apps that store runs, judge and write nuggets or answers, and never
imports them. Each of those apps registers what it provides when it starts (its
``AppConfig.ready``), through the functions below, and only through them:

- ``register_kind``: a kind of file the import page and commands take (``ImportKind``);
  metrics (runs), nuggets and answers register theirs.
- ``register_ranking_source``: the runs' rankings the labelling pool draws on; metrics.
- ``register_queue_order``: an order of an annotator's queue; judges.
- ``register_suggestion_source``: the suggestion shown in post-edit mode; judges.
- ``read_dimensions_with``: the reader of labels files whose rows name a quality
  ``dimension``; quality.
- ``register_card_part``: a part of every candidate card and of the document view (the
  quality grade of the card's source, with its keys); quality.
- ``register_undoer``: the undo of actions that changed no relevance label (a quality
  grade); quality.

``PROVIDERS`` says the same as data (``tests/test_layers.py`` checks it against the code).
"""

from __future__ import annotations

from .importing import ImportKind, ImportResult, register_kind
from .importing.judgments import read_dimensions_with
from .pool import RankingSource, register_ranking_source
from .queue_order import Score, register_queue_order
from .screen_parts import Undone, register_card_part, register_undoer
from .suggestions import Suggestion, SuggestionSource, register_suggestion_source

__all__ = [
    "PROVIDERS",
    "ImportKind",
    "ImportResult",
    "RankingSource",
    "Score",
    "Suggestion",
    "SuggestionSource",
    "Undone",
    "read_dimensions_with",
    "register_card_part",
    "register_kind",
    "register_queue_order",
    "register_ranking_source",
    "register_suggestion_source",
    "register_undoer",
]

# Each extension point and the apps that register into it.
PROVIDERS: dict[str, tuple[str, ...]] = {
    "register_kind": ("answers", "metrics", "nuggets"),
    "register_ranking_source": ("metrics",),
    "register_queue_order": ("judges",),
    "register_suggestion_source": ("judges",),
    "read_dimensions_with": ("quality",),
    "register_card_part": ("quality",),
    "register_undoer": ("quality",),
}
