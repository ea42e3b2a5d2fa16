from django.urls import path

from . import adjudication_views, labelling_views, views

app_name = "quality"

urlpatterns = [
    path("p/<slug:slug>/quality/", views.settings, name="settings"),
    path("p/<slug:slug>/quality/disputes/", adjudication_views.disputes, name="disputes"),
    path("p/<slug:slug>/quality/disputes/save/", adjudication_views.adjudicate, name="adjudicate"),
    path(
        "p/<slug:slug>/label/<int:pk>/quality/",
        labelling_views.label_query_quality,
        name="label_query_quality",
    ),
]
