from django.apps import AppConfig


class MetricsConfig(AppConfig):
    name = "metrics"
    verbose_name = "Metrics"
    default_auto_field = "django.db.models.BigAutoField"
