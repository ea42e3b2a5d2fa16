from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("accounts.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    path("", include("gold.urls")),
    path("", include("metrics.urls")),
    path("", include("judges.urls")),
    path("", include("nuggets.urls")),
    path("", include("answers.urls")),
    path("", include("api.urls")),
    path("", include("quality.urls")),
    path("", include("annotator.urls")),
]
