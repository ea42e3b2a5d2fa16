from django.apps import AppConfig


class AnswersConfig(AppConfig):
    name = "answers"
    verbose_name = "Answers"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Answers sit above every app they add to (the import page's kinds, gold sets, the
        # API's description): each takes them by registration.
        from . import importing, registrations  # noqa: F401  (problem codes)

        registrations.register_all()
