"""Upload page for project owners (placeholder until the import pipeline lands)."""

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse

from .access import get_project_for_user
from .models import Role


@login_required
def import_upload(request, slug):
    get_project_for_user(request, slug, Role.OWNER)
    return HttpResponse("")


@login_required
def import_status(request, slug, job_id):
    get_project_for_user(request, slug, Role.OWNER)
    raise Http404("No such import")
