"""What the nuggets app adds to the apps below it, each through that app's extension point."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _


def register_all() -> None:
    from annotator.extensions import ImportKind, register_kind
    from annotator.importing import TABLES
    from gold.parts import register_part
    from judges.engine import register_runner
    from judges.models import JobKind
    from metrics.figures import register_figures
    from web.sections import register_section

    from . import agreement, dashboard, panels, proposal_jobs, snapshots
    from .importing import load_nuggets

    register_runner(JobKind.NUGGETS, proposal_jobs.run_proposal_job)

    register_part(snapshots.PART)
    register_section("gold_diff", "nuggets/partials/gold_diff.html", _gold_diff)
    register_section("dashboard", "nuggets/partials/dashboard.html", dashboard.dashboard_section)
    register_section("drilldown", "nuggets/partials/drilldown.html", dashboard.drilldown_section)
    register_figures(dashboard.FIGURES)
    register_section("agreement", "nuggets/partials/agreement.html", agreement.agreement_section)
    register_section("query_page", "nuggets/partials/section.html", panels.query_page_section)
    register_section("labelling", "nuggets/partials/section.html", panels.labelling_section)

    register_kind(
        ImportKind(
            "nuggets",
            _("Nuggets"),
            TABLES,
            load_nuggets,
            help=_(
                "JSONL, CSV or XLSX: `qid`, `nugget_id`, `text`, `importance` (`vital` or `okay`) "
                "and the evidence: `evidence` as a list of `doc_id`, `start`, `end` (JSONL), "
                "or `doc_id`, `start`, `end` columns, one row per span (CSV, XLSX)."
            ),
            example="assay/examples/nuggets.jsonl",
        )
    )


def _gold_diff(*, diff, old, new) -> dict | None:
    found = diff["parts"].get("nuggets")
    if not found or not (found["n_old"] or found["n_new"]):
        return None
    return {"diff": found}
