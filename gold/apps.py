from django.apps import AppConfig


class GoldConfig(AppConfig):
    name = "gold"
    verbose_name = "Adjudication and gold sets"
    default_auto_field = "django.db.models.BigAutoField"
