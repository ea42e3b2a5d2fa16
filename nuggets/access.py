"""Who reads and who writes nuggets; every nugget view and section asks here.

- **writing** (create, edit, link, move, merge, delete, decide proposals): leads — owners
  and adjudicators;
- **reading the live nuggets**: those who read the live grades (owners, adjudicators,
  viewers: nuggets say what the relevant evidence is, as grades do); annotators only when
  the project's setting lets them, read-only, and in blind labelling (no post-edit
  suggestions) only on a query they have finished — their assignment of it done, or,
  without an assignment, once they have labelled it — so that nuggets never steer the
  labels they are still to give.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.utils.translation import gettext_lazy as _

from annotator.access import reads_live_grades, sees_all_labels
from annotator.models import Assignment, AssignmentStatus, Judgment, Membership, Query, Role

from .models import NuggetSetting

AFTER_LABELLING = _(
    "Nuggets are shown to annotators once they have labelled the query, if the owner allows it."
)


def edits_nuggets(membership: Membership) -> bool:
    return membership.role in (Role.OWNER, Role.ADJUDICATOR)


def annotators_see(project) -> bool:
    found = NuggetSetting.objects.filter(project=project).values_list("annotators_see", flat=True)
    return bool(next(iter(found), False))


def finished(membership: Membership, query: Query) -> bool:
    """Whether the annotator is done labelling ``query`` (see the module docstring)."""
    assignments = Assignment.objects.filter(query=query, annotator_id=membership.user_id)
    if assignments.exists():
        return assignments.filter(status=AssignmentStatus.DONE).exists()
    return Judgment.objects.filter(query=query, annotator_id=membership.user_id).exists()


def reads_nuggets(membership: Membership, query: Query) -> bool:
    """Whether the member may read the live nuggets of ``query``."""
    if sees_all_labels(membership) or reads_live_grades(membership):
        return True
    if membership.role != Role.ANNOTATOR or not annotators_see(membership.project):
        return False
    return bool(membership.project.post_edit) or finished(membership, query)


def reads_project_nuggets(membership: Membership) -> bool:
    """Whether the member may read every query's live nuggets (the overview, exports)."""
    return sees_all_labels(membership) or reads_live_grades(membership)


def require_read(membership: Membership, query: Query) -> None:
    if not reads_nuggets(membership, query):
        raise PermissionDenied(AFTER_LABELLING)


def require_edit(membership: Membership) -> None:
    if not edits_nuggets(membership):
        raise PermissionDenied(_("Only owners and adjudicators write nuggets."))
