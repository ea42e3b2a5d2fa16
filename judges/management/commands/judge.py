from django.core.management.base import BaseCommand, CommandError

from judges.cli import WAIT_HELP, add_project_and_judge, cost, judge_named, queued
from judges.prompts import LANGUAGE_NAMES, language_of
from judges.services import JudgeError, plan_job, prompts_for, start_job


class Command(BaseCommand):
    help = (
        "Start a judging job in the background (manage.py db_worker runs it): prints what it "
        "will cost before it starts; --wait follows it to the end (exit 0 all done, 1 some "
        "failed, 2 paused or cancelled); --dry-run only prints the plan and the prompts."
    )

    def add_arguments(self, parser):
        add_project_and_judge(parser)
        parser.add_argument(
            "--scope",
            nargs="+",
            default=["holes"],
            metavar="holes|pool|sample N|all",
            help="holes (default): pooled candidates no person has judged; pool; sample N; all",
        )
        parser.add_argument("--queries", nargs="+", metavar="QID", help="only these queries")
        parser.add_argument("--level", choices=["chunk", "document"], default="chunk")
        parser.add_argument("--chunking", help="the chunking at chunk level (default: the first)")
        parser.add_argument("--wait", action="store_true", help=WAIT_HELP)
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="print the plan, the cost estimate and one rendered prompt per language; "
            "start nothing",
        )

    def handle(self, *args, **options):
        judge = judge_named(options)
        scope, size = _scope(options["scope"])
        if options["level"] == "document" and options["chunking"]:
            raise CommandError("--chunking is for --level chunk")
        try:
            plan = plan_job(
                judge,
                scope=scope,
                level=options["level"],
                chunking=options["chunking"],
                qids=options["queries"],
                sample_size=size,
            )
        except JudgeError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(
            f"{plan.n_pairs} pairs to judge ({plan.already} already judged by "
            f"version {plan.version.number}, skipped): {cost(plan, judge)}"
        )
        if options["dry_run"]:
            self._prompts(plan)
            return
        if not plan.n_pairs:
            self.stdout.write("nothing to judge")
            return
        queued(self.stdout, start_job(plan), wait=options["wait"])

    def _prompts(self, plan) -> None:
        """One rendered prompt per language of the plan's queries (the first pair of each)."""
        first = {}
        texts = dict(plan.version.judge.project.queries.values_list("pk", "text"))
        for pair in plan.pairs:
            first.setdefault(language_of(texts.get(pair.query, "")), pair)
        prompts = prompts_for(plan.version, list(first.values()))
        for language, pair in sorted(first.items()):
            self.stdout.write(f"--- prompt ({LANGUAGE_NAMES[language]}) ---")
            self.stdout.write(prompts[pair])
        self.stdout.write("dry run: no job started")


def _scope(words: list[str]) -> tuple[str, int | None]:
    scope, rest = words[0], words[1:]
    if scope not in ("holes", "pool", "sample", "all"):
        raise CommandError(f"--scope must be holes, pool, sample N or all, not {scope!r}")
    if scope == "sample":
        if len(rest) != 1 or not rest[0].isdigit() or int(rest[0]) < 1:
            raise CommandError("--scope sample needs a number N ≥ 1")
        return scope, int(rest[0])
    if rest:
        raise CommandError(f"--scope {scope} takes no number")
    return scope, None
