"""Label sources: whose labels count for a number — people, imported assessors, judge versions.

Every label belongs to a source, known from its annotator's membership
(``Membership.source``): a person who logs in, an imported assessor set, or one version
of an LLM judge. A setting names the sources that count with tokens, the same in URLs,
the API and commands (``?sources=people,judge:gpt-mini``, ``--sources people,assessors``):

- ``people``: everyone who logs in (and the adjudications, which people give);
- ``assessors``: every imported assessor set;
- ``judges``: every judge's latest version;
- ``judge:<slug>``: that judge's latest version; ``judge:<slug>@<n>``: its version n.

``resolve_sources`` is the one function that decides which labels count; every path
that reads live labels takes its answer (dashboards, drill-downs, comparisons, the API,
exports, agreement, adjudication, freezing, calibration). Live numbers stand on
``people,assessors`` unless other sources are chosen.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

import numpy as np
from django.utils.translation import gettext as _

from .models import Membership, Project, SourceKind

PEOPLE = "people"
ASSESSORS = "assessors"
JUDGES = "judges"
DEFAULT_SOURCES = (PEOPLE, ASSESSORS)
MAX_TOKENS = 50
_JUDGE = re.compile(r"judge:([-a-zA-Z0-9_]{1,40})(?:@([1-9][0-9]{0,8}))?")


class SourcesError(ValueError):
    """Sources that cannot be read or are not in the project; ``str()`` says which, in the
    active language."""


def parse_sources(text: str | None) -> tuple[str, ...]:
    """The tokens of a comma-separated list, each checked, repeats dropped, in the order
    given; an empty list is the default (``people,assessors``)."""
    tokens = [t.strip() for t in (text or "").split(",") if t.strip()]
    if not tokens:
        return DEFAULT_SOURCES
    if len(tokens) > MAX_TOKENS:
        raise SourcesError(_("Name at most %(n)d sources.") % {"n": MAX_TOKENS})
    for token in tokens:
        if token not in (PEOPLE, ASSESSORS, JUDGES) and not _JUDGE.fullmatch(token):
            raise SourcesError(
                _(
                    "Unknown source %(token)s: use people, assessors, judges, judge:<slug> "
                    "or judge:<slug>@<version>."
                )
                % {"token": token}
            )
    return tuple(dict.fromkeys(tokens))


@dataclass(frozen=True)
class Sources:
    """The labels that count: every person's (when ``people``) and the chosen
    pseudo-annotators' (imported assessor sets and judge versions), by username.

    ``chosen`` maps each chosen pseudo-annotator to the source it stands for in coverage
    figures (``assessors``, ``judge:<slug>`` or ``judge:<slug>@<n>``); ``pseudo`` holds
    every pseudo-annotator of the project (their labels count only when chosen).
    """

    tokens: tuple[str, ...]
    people: bool
    chosen: dict[str, str]
    pseudo: frozenset[str]
    users: frozenset[int]  # user pks of ``chosen``
    pseudo_users: frozenset[int]
    # Each judge's latest version number (what ``judge:<slug>`` and ``judges`` stand for).
    latest: dict[str, int] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        """The tokens as asked (what every number says it stands on)."""
        return list(self.tokens)

    @property
    def text(self) -> str:
        return ",".join(self.tokens)

    @property
    def is_default(self) -> bool:
        return self.tokens == DEFAULT_SOURCES

    @property
    def adjudicated(self) -> bool:
        """Adjudications are people's decisions: they count when people do."""
        return self.people

    @property
    def key(self) -> tuple:
        """What caches of derived numbers are keyed by: the labels that count, not the
        tokens (``judge:x`` means another version once x has a new one)."""
        digest = hashlib.blake2b(digest_size=8)
        digest.update("\0".join(sorted(self.pseudo)).encode())
        return (self.people, tuple(sorted(self.chosen)), digest.hexdigest())

    def counts(self, username: str) -> bool:
        """Whether this annotator's labels count."""
        if username in self.pseudo:
            return username in self.chosen
        return self.people

    def source_of(self, username: str) -> str:
        """The source an annotator's labels stand for in coverage figures."""
        return self.chosen.get(username, PEOPLE if username not in self.pseudo else ASSESSORS)

    def labels(self) -> list[str]:
        """The sources that coverage figures name, in the order of the tokens."""
        found = [PEOPLE] if self.people else []
        found += [label for label in self.chosen.values()]
        return list(dict.fromkeys(found))

    def annotator_mask(self, annotators: list[str]) -> np.ndarray:
        """Per annotator code (an index into ``annotators``): whether its labels count."""
        return np.array([self.counts(name) for name in annotators], dtype=bool)

    def judgments(self, queryset):
        """A queryset of judgments narrowed to the labels that count."""
        if self.people:
            return queryset.exclude(annotator_id__in=self.pseudo_users - self.users)
        return queryset.filter(annotator_id__in=self.users)


def resolve_sources(project: Project, requested=None) -> Sources:
    """The labels that count for ``requested`` (a comma-separated text, tokens, a
    ``Sources`` already resolved, or None for ``people,assessors``) in ``project``.

    ``judge:<slug>`` and ``judge:<slug>@<n>`` must name a judge (and version) of the
    project; ``judges`` and ``assessors`` may stand for none. ``SourcesError`` otherwise.
    """
    if isinstance(requested, Sources):
        return requested
    tokens = requested if isinstance(requested, tuple | list) else parse_sources(requested)
    tokens = parse_sources(",".join(tokens))
    members = list(
        Membership.objects.filter(project=project, is_pseudo=True).values_list(
            "user_id", "user__username", "source", "judge_slug", "judge_version"
        )
    )
    latest: dict[str, int] = {}
    for _pk, _name, kind, slug, number in members:
        if kind == SourceKind.JUDGE and number is not None:
            latest[slug] = max(latest.get(slug, 0), number)
    chosen: dict[str, str] = {}
    users: set[int] = set()

    def choose(pk: int, name: str, label: str) -> None:
        chosen.setdefault(name, label)
        users.add(pk)

    for token in tokens:
        if token == PEOPLE:
            continue
        if token == ASSESSORS:
            for pk, name, kind, _slug, _n in members:
                if kind != SourceKind.JUDGE:
                    choose(pk, name, ASSESSORS)
            continue
        if token == JUDGES:
            for pk, name, kind, slug, number in members:
                if kind == SourceKind.JUDGE and number == latest.get(slug):
                    choose(pk, name, f"judge:{slug}")
            continue
        slug, number = _JUDGE.fullmatch(token).groups()
        if slug not in latest:
            raise SourcesError(_("This project has no judge %(slug)s.") % {"slug": slug})
        wanted = int(number) if number else latest[slug]
        found = [
            (pk, name)
            for pk, name, kind, s, n in members
            if kind == SourceKind.JUDGE and s == slug and n == wanted
        ]
        if not found:
            raise SourcesError(
                _("Judge %(slug)s has no version %(n)s.") % {"slug": slug, "n": wanted}
            )
        for pk, name in found:
            choose(pk, name, token)
    return Sources(
        tokens=tokens,
        people=PEOPLE in tokens,
        chosen=chosen,
        pseudo=frozenset(name for _pk, name, *_rest in members),
        users=frozenset(users),
        pseudo_users=frozenset(pk for pk, *_rest in members),
        latest=latest,
    )


def source_choices(project: Project) -> list[str]:
    """Every token that names something in the project, for pickers: people, assessors
    (when the project has some), judges, and each judge and each of its versions."""
    rows = (
        Membership.objects.filter(project=project, is_pseudo=True)
        .values_list("source", "judge_slug", "judge_version")
        .order_by("judge_slug", "judge_version")
    )
    choices = [PEOPLE]
    judges: dict[str, list[int]] = {}
    for kind, slug, number in rows:
        if kind == SourceKind.JUDGE and number is not None:
            judges.setdefault(slug, []).append(number)
        elif ASSESSORS not in choices:
            choices.append(ASSESSORS)
    if judges:
        choices.append(JUDGES)
    for slug, numbers in sorted(judges.items()):
        choices.append(f"judge:{slug}")
        choices += [f"judge:{slug}@{n}" for n in sorted(numbers)]
    return choices


def source_labels(project: Project, usernames: list[str]) -> dict[str, str]:
    """The source each named annotator's labels belong to: ``people``, ``assessors`` or
    ``judge:<slug>@<n>`` (frozen gold sets name their annotators; this names their
    sources)."""
    found = {
        name: (kind, slug, number)
        for name, kind, slug, number in Membership.objects.filter(
            project=project, user__username__in=list(usernames)
        ).values_list("user__username", "source", "judge_slug", "judge_version")
    }
    labels = {}
    for name in usernames:
        kind, slug, number = found.get(name, (SourceKind.PERSON, "", None))
        if kind == SourceKind.JUDGE:
            labels[name] = f"judge:{slug}@{number}"
        else:
            labels[name] = ASSESSORS if kind == SourceKind.ASSESSORS else PEOPLE
    return labels


def pinned_sources(project: Project, sources: Sources) -> list[str]:
    """What a frozen gold set records of ``sources``: ``people`` and ``assessors`` as
    chosen, and each chosen judge as the version it stood for (``judge:<slug>@<n>``:
    ``judge:x`` and ``judges`` mean other versions once a judge has a new one)."""
    judges = source_labels(
        project, [name for name, label in sources.chosen.items() if label != ASSESSORS]
    )
    pinned = [PEOPLE] if sources.people else []
    pinned += [ASSESSORS] if ASSESSORS in sources.tokens else []
    return pinned + sorted(set(judges.values()))
