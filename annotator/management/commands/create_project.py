from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils.text import slugify

from annotator.models import Membership, Project, Role


class Command(BaseCommand):
    help = "Create a project with its first owner."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--name", required=True)
        parser.add_argument("--owner", required=True, help="username of an existing user")
        parser.add_argument("--description", default="")

    def handle(self, *args, **options):
        slug = options["slug"]
        if slugify(slug) != slug:
            raise CommandError(f"{slug!r} is not a slug (lowercase letters, digits, -, _)")
        owner = get_user_model().objects.filter(username=options["owner"]).first()
        if owner is None:
            raise CommandError(
                f"no user {options['owner']!r}; create one with manage.py createsuperuser"
            )
        if Project.objects.filter(slug=slug).exists():
            raise CommandError(f"a project with slug {slug!r} already exists")
        with transaction.atomic():
            project = Project.objects.create(
                slug=slug, name=options["name"], description=options["description"]
            )
            Membership.objects.create(project=project, user=owner, role=Role.OWNER)
        self.stdout.write(f"created project {project.slug} owned by {owner.username}")
