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

from .dimensions import (
    DimensionInUse,
    add_dimension,
    change_site_field,
    delete_dimension,
    dimension_use,
    edit_dimension,
    project_gain_rule,
    set_gain_rule,
)
from .forms import (
    DeleteDimensionForm,
    DimensionForm,
    EditDimensionForm,
    GainRuleForm,
    SiteFieldForm,
)
from .models import QualityDimension

# The forms of the page, in its order; "edit" shows once a dimension is chosen (?edit=<key>).
ACTIONS = {
    "dimension": DimensionForm,
    "edit": EditDimensionForm,
    "site": SiteFieldForm,
    "gain": GainRuleForm,
    "delete": DeleteDimensionForm,
}


def _with_use(dimensions) -> list[QualityDimension]:
    """The dimensions, each with what holds it (``use``: grades, history …, gain rule)."""
    found = list(dimensions)
    for dimension in found:
        dimension.use = dimension_use(dimension)
    return found


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
    editing = QualityDimension.objects.filter(project=project, key=request.GET.get("edit") or "")
    if not forms["edit"].is_bound and editing.exists():
        forms["edit"].show(editing.get())
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
            elif action == "edit":
                edit_dimension(data.pop("dimension"), **data)
            elif action == "delete":
                try:
                    delete_dimension(data["dimension"])
                except DimensionInUse:  # graded between the form's check and now
                    messages.error(request, _("Not deleted: the dimension was graded meanwhile."))
                    return redirect("quality:settings", slug=slug)
                messages.success(request, _("Dimension deleted."))
                return redirect("quality:settings", slug=slug)
            else:
                set_gain_rule(project, data["rule"])
            messages.success(request, _("Settings saved."))
            return redirect("quality:settings", slug=slug)
        else:
            status = 400
    context = {
        "project": project,
        "membership": membership,
        "dimensions": _with_use(QualityDimension.objects.filter(project=project)),
        "forms": forms,
        "rule": project_gain_rule(project),
        "bad_action": action is not None and action not in forms,
        # What apps above quality add (judges grading a dimension …).
        "sections": sections("quality_settings", project=project, membership=membership),
    }
    return TemplateResponse(request, "quality/settings.html", context, status=status)
