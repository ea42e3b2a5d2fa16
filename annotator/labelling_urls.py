"""URLs of the labelling screens (assignments, queue, judging, document evidence, search).

Every URL answers GET for every member (writes are POST on the same address), so the
project-wide permission matrix can probe them all; ``pk`` is always a query's pk.
"""

from django.urls import path

from .labelling import document_views, judging_views, queue_views, search_views

urlpatterns: list = [
    path("p/<slug:slug>/queue/", queue_views.queue, name="queue"),
    path("p/<slug:slug>/assignments/", queue_views.assign, name="assign"),
    path("p/<slug:slug>/label/<int:pk>/", judging_views.label_query, name="label_query"),
    path(
        "p/<slug:slug>/label/<int:pk>/judge/",
        judging_views.label_query_judge,
        name="label_query_judge",
    ),
    path(
        "p/<slug:slug>/label/<int:pk>/status/",
        queue_views.label_query_status,
        name="label_query_status",
    ),
    path(
        "p/<slug:slug>/label/<int:pk>/document/",
        document_views.label_query_document,
        name="label_query_document",
    ),
    path(
        "p/<slug:slug>/label/<int:pk>/search/",
        search_views.label_query_search,
        name="label_query_search",
    ),
]
