from django.urls import path

from . import views

app_name = "quality"

urlpatterns = [
    path("p/<slug:slug>/quality/", views.settings, name="settings"),
]
