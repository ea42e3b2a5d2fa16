from django.apps import AppConfig


class NuggetsConfig(AppConfig):
    name = "nuggets"
    verbose_name = "Nuggets"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Nuggets sit above every app they add to: the import page's kinds, gold sets,
        # dashboards, the query page and the labelling screens take them by registration.
        from . import changes, importing, proposals, registrations  # noqa: F401  (problem codes)

        registrations.register_all()
