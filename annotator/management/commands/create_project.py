from django.core.management.base import BaseCommand, CommandError

from annotator.projects import ProjectRejected, create_project, find_user


class Command(BaseCommand):
    help = "Create a project with its first owner (the same checks as the New project page)."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--name", required=True)
        parser.add_argument("--owner", required=True, help="username or email of an existing user")
        parser.add_argument("--description", default="")

    def handle(self, *args, **options):
        try:
            owner = find_user(options["owner"])
            project = create_project(
                slug=options["slug"],
                name=options["name"],
                owner=owner,
                description=options["description"],
            )
        except ProjectRejected as error:
            raise CommandError(error.message) from None
        self.stdout.write(f"created project {project.slug} owned by {owner.username}")
