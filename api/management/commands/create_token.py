"""manage.py create_token USERNAME --name NAME: print a new API token for scripts."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from api.models import ApiToken


class Command(BaseCommand):
    help = "Create an API token for USERNAME and print it (it is shown only this once)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", required=True, help="what the token is for, e.g. ci")

    def handle(self, *args, **options):
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None or not user.is_active:
            raise CommandError(f"no active user named {options['username']!r}")
        name = options["name"].strip()[:100]
        if not name:
            raise CommandError("give the token a name with --name")
        _row, token = ApiToken.create_for(user, name)
        self.stdout.write(token)
