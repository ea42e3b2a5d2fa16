"""What the judging commands share (``judge``, ``judge_quality``, ``judge_answers``,
``propose_nuggets``): the project and judge they name, the cost line printed before a job
starts, and queueing (and following) the job."""

from __future__ import annotations

import sys

from django.core.management.base import CommandError
from django.db.models import Q

from annotator.cli import project_named

from .follow import follow
from .models import Judge, JudgeJob

WAIT_HELP = "follow the job until it ends: exit 0 all done, 1 some failed, 2 paused or cancelled"


def add_project_and_judge(parser) -> None:
    """The two positional arguments every judging command takes."""
    parser.add_argument("slug", help="the project's slug")
    parser.add_argument("judge", help="the judge's slug or name")


def judge_named(options) -> Judge:
    """The judge (by slug or name) of the project (by slug) the command names;
    ``CommandError`` if either is missing."""
    project = project_named(options["slug"])
    name = options["judge"]
    judge = Judge.objects.filter(Q(slug=name) | Q(name=name), project=project).first()
    if judge is None:
        raise CommandError(f"no judge {name!r} in {project.slug}")
    judge.project = project
    return judge


def cost(plan, judge: Judge) -> str:
    """What a plan will cost: calls against the judge's budget and tokens each way."""
    return (
        f"about {plan.calls} calls without retries (budget {judge.budget}), "
        f"≈ {plan.prompt_tokens()} prompt tokens and at most {plan.max_output_tokens} "
        "output tokens"
    )


def queued(stdout, job: JudgeJob, *, wait: bool = False) -> None:
    """Say the job is queued; with ``wait``, follow it and exit with its code (0 all done,
    1 some failed, 2 paused or cancelled)."""
    stdout.write(f"job {job.pk} queued; manage.py db_worker runs it")
    if wait:
        code = follow(job.pk, stdout, tty=stdout.isatty())
        if code:
            sys.exit(code)
