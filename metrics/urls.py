from django.urls import path

from . import file_views, run_views, views

app_name = "metrics"

urlpatterns = [
    path("p/<slug:slug>/metrics/", views.dashboard, name="dashboard"),
    path("p/<slug:slug>/metrics/measures/", views.choose_measures, name="choose_measures"),
    path("p/<slug:slug>/metrics/chart.svg", file_views.dashboard_chart, name="dashboard_chart"),
    path("p/<slug:slug>/metrics/export/", file_views.export_metrics, name="export"),
    path("p/<slug:slug>/metrics/qrels/", file_views.qrels_file, name="qrels_file"),
    path("p/<slug:slug>/metrics/compare/", views.compare, name="compare"),
    path("p/<slug:slug>/sources/compare/", views.source_rankings, name="source_rankings"),
    path("p/<slug:slug>/runs/", run_views.runs, name="runs"),
    path("p/<slug:slug>/metrics/series/", run_views.series, name="series"),
    path("p/<slug:slug>/runs/<int:pk>/", views.run_detail, name="run_detail"),
    path("p/<slug:slug>/runs/<int:pk>/edit/", run_views.run_edit, name="run_edit"),
    path("p/<slug:slug>/runs/<int:pk>/archive/", run_views.run_archive, name="run_archive"),
    path("p/<slug:slug>/runs/<int:pk>/delete/", run_views.run_delete, name="run_delete"),
    path("p/<slug:slug>/runs/<int:pk>/file/", file_views.run_file, name="run_file"),
    path(
        "p/<slug:slug>/runs/<int:pk>/histogram.svg",
        file_views.run_histogram,
        name="run_histogram",
    ),
    # Drill-downs are addressed by the query's own id (the judge URL first: a qid may
    # hold slashes).
    path("p/<slug:slug>/runs/<int:pk>/q/<path:qid>/judge/", views.judge, name="judge"),
    path("p/<slug:slug>/runs/<int:pk>/q/<path:qid>/", views.run_query, name="run_query"),
]
