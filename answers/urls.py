from django.urls import path

from . import api_views

app_name = "answers"

urlpatterns = [
    path("api/p/<slug:slug>/answers/", api_views.answer_runs, name="api_answer_runs"),
]
