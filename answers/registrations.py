"""What the answers app adds to the apps below it, each through that app's extension point."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _


def register_all() -> None:
    from annotator.extensions import ImportKind, register_kind
    from api.openapi import register_paths
    from gold.parts import register_part
    from judges.engine import register_runner
    from judges.models import JobKind
    from metrics.export_tables import register_export_table
    from web.sections import register_section

    from . import agreement, judge_jobs, metrics, openapi, snapshots
    from .importing import load_answers

    register_runner(JobKind.ANSWERS, judge_jobs.run_answer_job)
    register_paths(openapi.PATHS)
    register_part(snapshots.PART)
    register_section("agreement", "answers/partials/agreement.html", agreement.agreement_section)
    register_section("gold_diff", "answers/partials/gold_diff.html", snapshots.diff_section)
    register_export_table("answers", metrics.export_table)
    register_kind(
        ImportKind(
            "answers",
            _("Answer run (RAG answers with citations)"),
            ("jsonl",),
            load_answers,
            help=_(
                "JSONL, one answer a line: TREC RAG 2024/2025 output (`topic_id` or "
                "`metadata.narrative_id`, `references`, `answer`: sentences with `text` and "
                "`citations` indexing the references), or `qid`, `answer` and optional "
                "`sentences` with `citations` as `doc_id` + `start` + `end`, `chunk_id` or "
                "`doc_id`. References and chunk citations name chunks of the chunking given."
            ),
            example="assay/examples/answers.jsonl",
            takes=("run_name", "parameters", "chunking"),
        )
    )
