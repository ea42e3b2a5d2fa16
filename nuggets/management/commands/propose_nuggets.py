from django.core.management.base import BaseCommand, CommandError

from judges.cli import add_project_and_judge, cost, judge_named, queued
from judges.services import JudgeError
from nuggets.proposal_jobs import MAX_NUGGETS, plan_proposals, start_proposals
from nuggets.proposals import DEFAULT_MAX_NUGGETS


class Command(BaseCommand):
    help = (
        "Ask an LLM judge to propose nuggets for queries from their relevant evidence (people's "
        "labels at or above the relevance threshold), in the background (manage.py db_worker "
        "runs it); prints what it will cost before it starts. Proposals wait for a lead."
    )

    def add_arguments(self, parser):
        add_project_and_judge(parser)
        parser.add_argument(
            "--queries",
            nargs="+",
            metavar="QID",
            help="only these queries (default: every query with relevant evidence and no nuggets)",
        )
        parser.add_argument(
            "--max",
            type=int,
            default=DEFAULT_MAX_NUGGETS,
            metavar="N",
            help=f"at most N nuggets per query (1–{MAX_NUGGETS}, default {DEFAULT_MAX_NUGGETS})",
        )

    def handle(self, *args, **options):
        judge = judge_named(options)
        try:
            plan = plan_proposals(judge, qids=options["queries"], max_nuggets=options["max"])
        except JudgeError as error:
            raise CommandError(str(error)) from None
        if plan.without_evidence:
            self.stdout.write(
                f"{len(plan.without_evidence)} queries without relevant evidence labelled by "
                f"people, left out: {' '.join(plan.without_evidence[:20])}"
            )
        self.stdout.write(
            f"{len(plan.asked)} queries to ask for at most {plan.max_nuggets} nuggets each "
            f"({len(plan.already)} already proposed for by version {plan.version.number}, "
            f"skipped): {cost(plan, judge)}"
        )
        if not plan.asked:
            self.stdout.write("nothing to ask")
            return
        queued(self.stdout, start_proposals(plan))
