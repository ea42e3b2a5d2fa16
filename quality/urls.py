from django.urls import path

from . import adjudication_views, views

app_name = "quality"

urlpatterns = [
    path("p/<slug:slug>/quality/", views.settings, name="settings"),
    path("p/<slug:slug>/quality/disputes/", adjudication_views.disputes, name="disputes"),
    path("p/<slug:slug>/quality/disputes/save/", adjudication_views.adjudicate, name="adjudicate"),
]
