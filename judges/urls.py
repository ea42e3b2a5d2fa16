from django.urls import path

from . import quality_views, views

app_name = "judges"

urlpatterns = [
    path("p/<slug:slug>/judges/", views.judge_list, name="list"),
    path("p/<slug:slug>/judges/calibration/", views.calibration, name="calibration"),
    path(
        "p/<slug:slug>/judges/quality/estimate/",
        quality_views.quality_estimate,
        name="quality_estimate",
    ),
    path("p/<slug:slug>/judges/quality/start/", quality_views.quality_start, name="quality_start"),
    path("p/<slug:slug>/judges/<int:judge_pk>/", views.judge_detail, name="detail"),
    path("p/<slug:slug>/judges/<int:judge_pk>/estimate/", views.job_estimate, name="estimate"),
    path("p/<slug:slug>/judges/<int:judge_pk>/start/", views.job_start, name="start"),
    path("p/<slug:slug>/judges/jobs/<int:job_pk>/", views.job_status, name="job"),
    path("p/<slug:slug>/judges/jobs/<int:job_pk>/cancel/", views.job_cancel, name="cancel"),
    path("p/<slug:slug>/judges/jobs/<int:job_pk>/resume/", views.job_resume, name="resume"),
    path("p/<slug:slug>/judges/jobs/<int:job_pk>/pause/", views.job_pause, name="pause"),
]
