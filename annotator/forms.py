from django import forms
from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy as _

from .models import Role


class ListFilterForm(forms.Form):
    """Search and paging for list pages; bad values are a 400, not a guess."""

    q = forms.CharField(required=False, max_length=200)
    page = forms.IntegerField(required=False, min_value=1)


class MemberAddForm(forms.Form):
    username = forms.CharField(max_length=150, label=_("Username"))
    role = forms.ChoiceField(choices=Role.choices, label=_("Role"))

    def clean_username(self):
        username = self.cleaned_data["username"]
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            raise forms.ValidationError(_("No active user with this username."))
        return user


class MemberRoleForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices)


class ProjectSettingsForm(forms.ModelForm):
    class Meta:
        from .models import Project

        model = Project
        fields = [
            "name",
            "description",
            "guidelines",
            "grade_label_0",
            "grade_label_1",
            "grade_label_2",
            "grade_label_3",
            "relevance_threshold",
            "pool_depth",
        ]
        widgets = {
            "description": forms.Textarea(attrs={"rows": 2}),
            "guidelines": forms.Textarea(attrs={"rows": 8}),
        }

    def clean_relevance_threshold(self):
        value = self.cleaned_data["relevance_threshold"]
        if not 1 <= value <= 3:
            raise forms.ValidationError(_("The threshold is a grade from 1 to 3."))
        return value
