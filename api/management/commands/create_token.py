"""manage.py create_token USERNAME --name NAME [--read-only] [--project SLUG ...]: print a
new API token for scripts, optionally limited to reading and to some projects."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotator.models import Project
from api.models import ApiToken


class Command(BaseCommand):
    help = "Create an API token for USERNAME and print it (it is shown only this once)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", required=True, help="what the token is for, e.g. ci")
        parser.add_argument(
            "--read-only", action="store_true", help="the token may read but not upload"
        )
        parser.add_argument(
            "--project",
            action="append",
            default=[],
            metavar="SLUG",
            help="limit the token to this project of the user's (repeat for several)",
        )

    def handle(self, *args, **options):
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None or not user.is_active:
            raise CommandError(f"no active user named {options['username']!r}")
        name = options["name"].strip()[:100]
        if not name:
            raise CommandError("give the token a name with --name")
        projects = []
        for slug in options["project"]:
            project = Project.objects.for_user(user).filter(slug=slug).first()
            if project is None:
                raise CommandError(f"{user.get_username()} is no member of a project {slug!r}")
            projects.append(project)
        _row, token = ApiToken.create_for(
            user, name, read_only=options["read_only"], projects=projects
        )
        self.stdout.write(token)
