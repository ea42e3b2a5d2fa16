"""The demo app: `manage.py demo` builds the demo projects; it sits above every other app."""

from django.apps import AppConfig


class DemoConfig(AppConfig):
    name = "demo"
    verbose_name = "Demo"
