from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from judges.cli import WAIT_HELP, add_project_and_judge, cost, judge_named, queued
from judges.quality_jobs import plan_quality, prompts_for, start_quality
from judges.services import JudgeError
from quality.models import QualityDimension


class Command(BaseCommand):
    help = (
        "Start a job in the background in which an LLM judge grades a quality dimension, per "
        "document or per site as the dimension says (manage.py db_worker runs it): prints "
        "what it will cost before it starts; the grades are the judge version's label "
        "source. --wait follows it to the end (exit 0 all done, 1 some failed, 2 paused or "
        "cancelled); --dry-run only prints the plan and one prompt."
    )

    def add_arguments(self, parser):
        add_project_and_judge(parser)
        parser.add_argument("--dimension", required=True, help="the quality dimension's key")
        parser.add_argument(
            "--max", type=int, metavar="N", help="grade at most N units (people's first)"
        )
        parser.add_argument(
            "--scope",
            choices=["all", "people"],
            default="all",
            help="all (default): every document or site; people: those people graded "
            "(for calibration)",
        )
        parser.add_argument(
            "--prompt",
            metavar="FILE",
            help="a UTF-8 file with the dimension's prompt for judges (kept from this job on) "
            "(placeholders: {{dimension}} {{scale}} {{max_grade}} {{site}} {{title}} "
            "{{metadata}} {{text}} {{guidelines}})",
        )
        parser.add_argument("--wait", action="store_true", help=WAIT_HELP)
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="print the plan, the cost estimate and the first unit's prompt; start "
            "nothing (a --prompt given is not kept)",
        )

    def handle(self, *args, **options):
        judge = judge_named(options)
        project = judge.project
        dimension = QualityDimension.objects.filter(
            project=project, key=options["dimension"]
        ).first()
        if dimension is None:
            known = ", ".join(
                QualityDimension.objects.filter(project=project).values_list("key", flat=True)
            )
            raise CommandError(
                f"no quality dimension {options['dimension']!r} in {project.slug}"
                + (f" (it has {known})" if known else " (it has none)")
            )
        prompt = None
        if options["prompt"]:
            path = Path(options["prompt"])
            try:
                prompt = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as error:
                raise CommandError(f"{path}: cannot read the prompt ({error})") from None
        try:
            plan = plan_quality(
                judge,
                dimension,
                scope=options["scope"],
                max_units=options["max"],
                prompt=prompt,
            )
        except JudgeError as error:
            raise CommandError(f"{options['prompt'] or 'judge_quality'}: {error}") from None
        unit = "sites" if dimension.per_site else "documents"
        self.stdout.write(
            f"{len(plan.units)} {unit} to grade on {dimension.key} ({plan.already} already "
            f"graded by version {plan.version.number}, skipped): {cost(plan, judge)}"
        )
        if options["dry_run"]:
            if plan.units:
                self.stdout.write("--- prompt ---")
                self.stdout.write(
                    prompts_for(dimension, plan.prompt, plan.units[:1])[plan.units[0]]
                )
            self.stdout.write("dry run: no job started")
            return
        if not plan.units:
            self.stdout.write("nothing to grade")
            return
        queued(self.stdout, start_quality(plan), wait=options["wait"])
