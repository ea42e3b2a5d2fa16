from django.urls import path

from . import views

app_name = "gold"

urlpatterns = [
    path("p/<slug:slug>/adjudicate/", views.adjudication_queue, name="queue"),
    path("p/<slug:slug>/adjudicate/save/", views.adjudicate_item, name="adjudicate"),
    path(
        "p/<slug:slug>/adjudicate/download/",
        views.disagreements_download,
        name="disagreements_download",
    ),
    path("p/<slug:slug>/agreement/", views.agreement, name="agreement"),
    path("p/<slug:slug>/gold/", views.gold_set_list, name="list"),
    path("p/<slug:slug>/gold/<int:pk>/", views.gold_set_detail, name="detail"),
    path("p/<slug:slug>/gold/<int:pk>/export/", views.gold_set_export, name="export"),
    path("p/<slug:slug>/gold/<int:pk>/release/", views.gold_set_release, name="release"),
    path("p/<slug:slug>/gold/<int:pk>/delete/", views.gold_set_delete, name="delete"),
]
