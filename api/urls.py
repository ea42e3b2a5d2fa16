from django.urls import path

from . import job_views, metrics_views, openapi, views

app_name = "api"

urlpatterns = [
    path("account/tokens/", views.tokens, name="tokens"),
    path("api/openapi.json", openapi.schema, name="openapi"),
    path("api/p/<slug:slug>/runs/", metrics_views.runs, name="upload_run"),
    path("api/p/<slug:slug>/gold/", metrics_views.gold_list, name="gold_list"),
    path("api/p/<slug:slug>/compare/", metrics_views.compare, name="compare"),
    path(
        "api/p/<slug:slug>/sources/compare/",
        metrics_views.sources_compare,
        name="sources_compare",
    ),
    path("api/p/<slug:slug>/runs/<int:pk>/metrics/", metrics_views.run_metrics, name="run_metrics"),
    path("api/p/<slug:slug>/runs/<int:pk>/gate/", metrics_views.gate, name="gate"),
    path("api/p/<slug:slug>/gold/<int:pk>/export/", views.gold_export, name="gold_export"),
    path("api/p/<slug:slug>/jobs/<int:pk>/", job_views.run_job, name="run_job"),
]
