from django.urls import path

from . import views

app_name = "api"

urlpatterns = [
    path("account/tokens/", views.tokens, name="tokens"),
    path("api/p/<slug:slug>/runs/", views.upload_run, name="upload_run"),
    path("api/p/<slug:slug>/runs/<int:pk>/metrics/", views.run_metrics, name="run_metrics"),
    path("api/p/<slug:slug>/gold/<int:pk>/export/", views.gold_export, name="gold_export"),
]
