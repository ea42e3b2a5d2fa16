"""Tables apps above metrics add to ``export_metrics`` (answer runs …), registered at start-up.

A table is built for a project as (header, rows), ``build(project, sources=...)`` with the
label sources asked (``--sources``; None: the table's default); ``export_metrics --table
NAME`` writes one instead of the runs' metrics, and every XLSX export carries each as a
sheet of its own.
"""

from __future__ import annotations

from collections.abc import Callable

Table = tuple[list[str], list[list]]
_tables: dict[str, Callable[..., Table]] = {}


def register_export_table(name: str, build: Callable[..., Table]) -> None:
    _tables[name] = build


def export_tables() -> dict[str, Callable[..., Table]]:
    return dict(_tables)
