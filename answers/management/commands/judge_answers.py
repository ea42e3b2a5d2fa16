"""manage.py judge_answers SLUG JUDGE [--runs ...] [--queries ...] [--max N] [--aspects ...]"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from answers.judge_jobs import ASPECTS, plan_answers, start_answers
from judges.cli import add_project_and_judge, cost, judge_named, queued
from judges.services import JudgeError


class Command(BaseCommand):
    help = (
        "Ask an LLM judge to judge answer runs: every nugget of each answer (support, partial "
        "or not; one call per answer) and the support of each citation (full, partial or "
        "none; one call per citation), in the background (manage.py db_worker runs it); "
        "prints what it will cost before it starts. The judgements are the judge version's "
        "(source judge:<slug>@<n>), never people's; answer_calibration compares them."
    )

    def add_arguments(self, parser):
        add_project_and_judge(parser)
        parser.add_argument(
            "--runs", nargs="+", metavar="NAME", help="answer runs (default: every active one)"
        )
        parser.add_argument("--queries", nargs="+", metavar="QID", help="only these queries")
        parser.add_argument(
            "--max",
            type=int,
            metavar="N",
            help="at most N answers: those people judged first, then by query and run",
        )
        parser.add_argument(
            "--aspects",
            nargs="+",
            choices=ASPECTS,
            default=list(ASPECTS),
            help="what to judge (default: nugget support)",
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="print the cost and start nothing"
        )
        parser.add_argument("--json", action="store_true", help="the plan (and job) as JSON")

    def handle(self, *args, **options):
        judge = judge_named(options)
        try:
            plan = plan_answers(
                judge,
                runs=options["runs"],
                qids=options["queries"],
                max_answers=options["max"],
                aspects=options["aspects"],
            )
        except JudgeError as error:
            raise CommandError(str(error)) from None
        job = None
        if plan.questions and not options["dry_run"]:
            job = start_answers(plan)
        if options["json"]:
            self.stdout.write(
                json.dumps({**plan.as_json(), "job": job.pk if job else None}, ensure_ascii=False)
            )
            return
        self.stdout.write(
            f"{plan.answers} answers of {', '.join(plan.runs) or 'no run'}: "
            f"{plan.nugget_questions} nugget calls and {plan.support_questions} citation "
            f"calls to make ({plan.already} already judged by version {plan.version.number}, "
            f"skipped; {plan.without_nuggets} answers to queries without nuggets): "
            f"{cost(plan, judge)}"
        )
        if not plan.questions:
            self.stdout.write("nothing to ask")
        elif job is None:
            self.stdout.write("dry run: nothing started")
        else:
            queued(self.stdout, job)
