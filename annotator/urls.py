from django.urls import path

from . import import_views, labelling_urls, original_views, views

app_name = "annotator"

urlpatterns = [
    path("", views.project_list, name="project_list"),
    path("new/", views.project_new, name="project_new"),
    path("p/<slug:slug>/", views.project_detail, name="project_detail"),
    path("p/<slug:slug>/members/", views.members, name="members"),
    path("p/<slug:slug>/settings/", views.project_settings, name="project_settings"),
    path("p/<slug:slug>/documents/", views.document_list, name="document_list"),
    path("p/<slug:slug>/documents/<int:pk>/", views.document_detail, name="document_detail"),
    path(
        "p/<slug:slug>/documents/<int:pk>/original/",
        original_views.document_original,
        name="document_original",
    ),
    path(
        "p/<slug:slug>/documents/<int:pk>/pages/<int:page>.png",
        original_views.document_page_image,
        name="document_page_image",
    ),
    path(
        "p/<slug:slug>/documents/<int:pk>/boxes/",
        original_views.document_span_boxes,
        name="document_span_boxes",
    ),
    path("p/<slug:slug>/queries/", views.query_list, name="query_list"),
    path("p/<slug:slug>/queries/<int:pk>/", views.query_detail, name="query_detail"),
    path("p/<slug:slug>/chunkings/", views.chunking_list, name="chunking_list"),
    path("p/<slug:slug>/imports/", import_views.import_upload, name="import_upload"),
    path("p/<slug:slug>/imports/<int:job_id>/", import_views.import_status, name="import_status"),
]

urlpatterns += labelling_urls.urlpatterns
