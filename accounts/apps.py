from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.contrib import admin

        from .forms import ThrottledAdminAuthenticationForm

        # The admin's sign-in shares the one throttle with the sign-in page.
        admin.site.login_form = ThrottledAdminAuthenticationForm
