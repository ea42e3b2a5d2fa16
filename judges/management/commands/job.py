"""``manage.py job SLUG ID --pause | --resume | --cancel | --retry-failed``: act on one
judging job (also one whose worker died)."""

from django.core.management.base import BaseCommand, CommandError

from annotator.cli import project_named
from judges.models import JudgeJob
from judges.services import JudgeError, cancel_job, pause_job, resume_job


class Command(BaseCommand):
    help = "Pause, resume, cancel a judging job, or try its failed pairs again"

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the project's slug")
        parser.add_argument("id", type=int, help="the judging job's number (manage.py jobs)")
        action = parser.add_mutually_exclusive_group(required=True)
        for flag in ("--pause", "--resume", "--cancel", "--retry-failed"):
            action.add_argument(flag, action="store_true")

    def handle(self, *args, **options):
        project = project_named(options["slug"])
        job = JudgeJob.objects.filter(version__judge__project=project, pk=options["id"]).first()
        if job is None:
            raise CommandError(f"no judging job {options['id']} in {project.slug}")
        try:
            if options["pause"]:
                pause_job(job)
            elif options["cancel"]:
                cancel_job(job)
            else:
                count = resume_job(job, failed=options["retry_failed"])
                self.stdout.write(f"job {job.pk} queued again: {count} pairs to try")
        except JudgeError as error:
            raise CommandError(str(error)) from None
        job.refresh_from_db()
        asked = " (asked; the worker stops after the calls in flight)"
        note = asked if job.pause_requested or job.cancel_requested else ""
        self.stdout.write(f"job {job.pk}: {job.status}{note}")
