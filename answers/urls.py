from django.urls import path

from . import api_views, judging_views, llm_views, views

app_name = "answers"

urlpatterns = [
    path("p/<slug:slug>/answers/", views.dashboard, name="dashboard"),
    path("p/<slug:slug>/answers/judge/", judging_views.judge, name="judge"),
    path("p/<slug:slug>/answers/judge/side/", judging_views.judge_side, name="judge_side"),
    path("p/<slug:slug>/answers/judge/<int:pk>/save/", judging_views.save, name="judge_save"),
    path("p/<slug:slug>/answers/judge/<int:pk>/undo/", judging_views.undo, name="judge_undo"),
    path("p/<slug:slug>/answers/disputes/", judging_views.disputes, name="disputes"),
    path(
        "p/<slug:slug>/answers/disputes/<int:pk>/",
        judging_views.adjudicate,
        name="adjudicate",
    ),
    path("p/<slug:slug>/answers/compare/", views.compare, name="compare"),
    path("p/<slug:slug>/answers/llm-judge/", llm_views.llm_judging, name="llm_judging"),
    path("p/<slug:slug>/answers/calibration/", llm_views.calibration, name="calibration"),
    path("p/<slug:slug>/answers/<int:pk>/", views.run_detail, name="run_detail"),
    path("p/<slug:slug>/answers/<int:pk>/<int:answer>/", views.answer_view, name="answer"),
    path("api/p/<slug:slug>/answers/", api_views.answer_runs, name="api_answer_runs"),
    path(
        "api/p/<slug:slug>/answers/calibration/",
        llm_views.api_calibration,
        name="api_answer_calibration",
    ),
    path(
        "api/p/<slug:slug>/answers/<int:pk>/metrics/",
        api_views.answer_run_metrics,
        name="api_answer_metrics",
    ),
    path("api/p/<slug:slug>/answers/compare/", api_views.answer_compare, name="api_answer_compare"),
    path("api/p/<slug:slug>/answers/<int:pk>/gate/", api_views.answer_gate, name="api_answer_gate"),
]
