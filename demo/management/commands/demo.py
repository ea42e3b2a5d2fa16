"""`manage.py demo`: create (or complete) the Cranfield and LeCaRD demo projects and users."""

from django.core.management.base import BaseCommand

from demo.loading import build_demo


class Command(BaseCommand):
    help = "Create the Cranfield and LeCaRD demo projects with demo users (idempotent)."

    def handle(self, *args, **options):
        build_demo(self.stdout.write, self.style.SUCCESS)
