from django.urls import path

from . import views

app_name = "nuggets"

urlpatterns = [
    path("p/<slug:slug>/nuggets/", views.overview, name="overview"),
    path("p/<slug:slug>/nuggets/setting/", views.setting, name="setting"),
    path("p/<slug:slug>/nuggets/export/", views.export, name="export"),
    path("p/<slug:slug>/queries/<int:pk>/nuggets/", views.query_nuggets, name="query_nuggets"),
    path("p/<slug:slug>/queries/<int:pk>/nuggets/propose/", views.propose, name="propose"),
]
