"""URLs of the labelling screens (assignments, queue, judging, document evidence, search).

Every URL answers GET for every member (writes are POST on the same address), so the
project-wide permission matrix can probe them all; ``pk`` is always a query's pk.
"""

from django.urls import path

from . import labelling_views as views

urlpatterns: list = [
    path("p/<slug:slug>/queue/", views.queue, name="queue"),
    path("p/<slug:slug>/assignments/", views.assign, name="assign"),
    path("p/<slug:slug>/label/<int:pk>/", views.label_query, name="label_query"),
    path("p/<slug:slug>/label/<int:pk>/judge/", views.label_query_judge, name="label_query_judge"),
    path(
        "p/<slug:slug>/label/<int:pk>/status/", views.label_query_status, name="label_query_status"
    ),
    path(
        "p/<slug:slug>/label/<int:pk>/document/",
        views.label_query_document,
        name="label_query_document",
    ),
    path(
        "p/<slug:slug>/label/<int:pk>/search/", views.label_query_search, name="label_query_search"
    ),
]
