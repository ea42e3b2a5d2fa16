"""What the nuggets app adds to the apps below it, each through that app's extension point."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _


def register_all() -> None:
    from annotator.importing import TABLES, ImportKind, register_kind

    from .importing import load_nuggets

    register_kind(
        ImportKind(
            "nuggets",
            _("Nuggets"),
            TABLES,
            load_nuggets,
            help=_(
                "JSONL, CSV or XLSX: `qid`, `nugget_id`, `text`, `importance` (vital or okay) "
                "and the evidence: `evidence` as a list of `doc_id`, `start`, `end` (JSONL), "
                "or `doc_id`, `start`, `end` columns, one row per span (CSV, XLSX)."
            ),
            example="assay/examples/nuggets.jsonl",
        )
    )
