"""The owner's quality settings page: the project's dimensions, their site fields and
the gain rule its measures use (owners only; every write checked before it is made)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from annotator.access import get_project_for_user
from annotator.models import Role
from web.sections import sections

from .dimensions import add_dimension, change_site_field, project_gain_rule, set_gain_rule
from .forms import DimensionForm, GainRuleForm, SiteFieldForm
from .models import QualityDimension

ACTIONS = {"dimension": DimensionForm, "site": SiteFieldForm, "gain": GainRuleForm}


@login_required
@require_http_methods(["GET", "POST"])
def settings(request: HttpRequest, slug: str) -> HttpResponse:
    project, membership = get_project_for_user(request, slug, Role.OWNER)
    action = request.POST.get("action") if request.method == "POST" else None
    forms = {
        name: form_class(request.POST if name == action else None, project=project)
        for name, form_class in ACTIONS.items()
    }
    if not forms["gain"].is_bound:
        forms["gain"].initial = {"rule": str(project_gain_rule(project))}
    status = 200
    if action is not None:
        form = forms.get(action)
        if form is None:
            status = 400
        elif form.is_valid():
            data = form.cleaned_data
            if action == "dimension":
                add_dimension(project, **data)
            elif action == "site":
                change_site_field(data["dimension"], data["site_field"], data["site_host"])
            else:
                set_gain_rule(project, data["rule"])
            messages.success(request, _("Settings saved."))
            return redirect("quality:settings", slug=slug)
        else:
            status = 400
    context = {
        "project": project,
        "membership": membership,
        "dimensions": QualityDimension.objects.filter(project=project),
        "forms": forms,
        "rule": project_gain_rule(project),
        "bad_action": action is not None and action not in forms,
        # What apps above quality add (judges grading a dimension …).
        "sections": sections("quality_settings", project=project, membership=membership),
    }
    return TemplateResponse(request, "quality/settings.html", context, status=status)
