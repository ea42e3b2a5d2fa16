from django import forms
from django.utils.translation import gettext_lazy as _

from numerics.grades import MAX_GRADE
from web.fields import WholeField

from .importing import kinds
from .models import Role


class ListFilterForm(forms.Form):
    """Search and paging for list pages; bad values are a 400, not a guess."""

    q = forms.CharField(required=False, max_length=200)
    page = WholeField(required=False, min_value=1)


class MemberAddForm(forms.Form):
    # Who it is, is decided by ``projects.find_user`` (the one rule for username or email).
    username = forms.CharField(max_length=254, label=_("Username or email"))
    # Most people added to a project label; owning is given on purpose.
    role = forms.ChoiceField(choices=Role.choices, initial=Role.ANNOTATOR, label=_("Role"))


class ProjectNewForm(forms.Form):
    """A new project; the checks are ``projects.create_project``'s, as for the command."""

    # Checked by the service, so the page and the command line give the same messages.
    slug = forms.CharField(
        required=False,
        max_length=1000,
        label=_("Short name (slug)"),
        help_text=_("Part of the project's address: lowercase letters, digits, - and _."),
        widget=forms.TextInput({"required": True}),
    )
    name = forms.CharField(
        required=False,
        max_length=1000,
        label=_("Name"),
        widget=forms.TextInput({"required": True}),
    )
    description = forms.CharField(
        required=False, max_length=5000, label=_("Description"), widget=forms.Textarea({"rows": 3})
    )


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
            "post_edit",
            "candidate_overlap",
            "short_passage",
            "mapping",
        ]
        widgets = {
            "description": forms.Textarea(attrs={"rows": 2}),
            "guidelines": forms.Textarea(attrs={"rows": 8}),
        }
        labels = {
            "name": _("Name"),
            "description": _("Description"),
            "guidelines": _("Guidelines"),
            "grade_label_0": _("Label of grade 0"),
            "grade_label_1": _("Label of grade 1"),
            "grade_label_2": _("Label of grade 2"),
            "grade_label_3": _("Label of grade 3"),
            "relevance_threshold": _("Relevance threshold"),
            "pool_depth": _("Pool depth"),
            "post_edit": _("Post-edit mode"),
            "candidate_overlap": _("Candidate overlap"),
            "short_passage": _("Confirm passages shorter than"),
            "mapping": _("Mapping"),
        }
        help_texts = {
            "guidelines": _("Shown to annotators on every labelling screen."),
            "grade_label_0": _(
                "Left unchanged, the default labels are shown in each user's language."
            ),
            "relevance_threshold": _("Lowest grade that counts as relevant for binary measures."),
            "pool_depth": _("Top-k of every run pooled into the candidates to judge."),
            "post_edit": _(
                "Show annotators an LLM judge's grade and reason as a suggestion (off: blind)."
            ),
            "candidate_overlap": _(
                "Candidates sharing more than this share of the shorter one's text (or lying "
                "inside another) are shown as one card."
            ),
            "short_passage": _(
                "Characters. A selection this short is usually a slip of the mouse: the "
                "annotator is asked before it is saved as a passage. 0 never asks."
            ),
            "mapping": _(
                "How a label reaches the candidates it covers: any_overlap, contains, "
                "evidence_overlap>=θ or chunk_overlap>=θ."
            ),
        }

    # The page shows the fields in these groups, in this order.
    GROUPS = [
        (_("The project"), ["name", "description", "guidelines"]),
        (
            _("Grades"),
            ["grade_label_0", "grade_label_1", "grade_label_2", "grade_label_3"],
        ),
        (_("Labelling"), ["pool_depth", "candidate_overlap", "short_passage", "post_edit"]),
        (_("Evaluation"), ["relevance_threshold", "mapping"]),
    ]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Left out of a post, they keep their current values.
        self.fields["candidate_overlap"].required = False
        self.fields["mapping"].required = False
        self.fields["short_passage"].required = False

    def groups(self) -> list[tuple[str, list]]:
        """(legend, bound fields) for each group of the page."""
        return [(legend, [self[name] for name in names]) for legend, names in self.GROUPS]

    def clean_candidate_overlap(self):
        value = self.cleaned_data["candidate_overlap"]
        if value is None:
            return self.instance.candidate_overlap
        if not 0 < value <= 1:
            raise forms.ValidationError(_("A share above 0 and at most 1, e.g. 0.5."))
        return value

    def clean_short_passage(self):
        value = self.cleaned_data["short_passage"]
        if value is None:
            return self.instance.short_passage
        if value > 1000:
            raise forms.ValidationError(_("At most 1,000 characters."))
        return value

    def clean_mapping(self):
        from numerics.mapping import MappingPolicy

        if not self.cleaned_data["mapping"]:
            return self.instance.mapping
        try:
            return str(MappingPolicy.parse(self.cleaned_data["mapping"]))
        except ValueError as error:
            raise forms.ValidationError(str(error)) from None

    def clean_relevance_threshold(self):
        value = self.cleaned_data["relevance_threshold"]
        if not 1 <= value <= MAX_GRADE:
            raise forms.ValidationError(
                _("The threshold is a grade from 1 to %(max)s.") % {"max": MAX_GRADE}
            )
        return value


def import_kinds() -> list[tuple[str, str]]:
    """The kinds the import page offers: annotator's own and those other apps register
    (metrics adds retrieval runs)."""
    return [(kind.name, kind.label) for kind in kinds()]


IMPORT_FORMATS = [
    ("", _("From the file extension")),
    ("jsonl", "JSONL"),
    ("csv", "CSV"),
    ("xlsx", "XLSX"),
    ("qrels", _("TREC qrels")),
    ("trec", _("TREC run")),
]


class SeveralFilesInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class SeveralFilesField(forms.FileField):
    """One or more files; each is checked as a file field checks one."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", SeveralFilesInput(attrs={"multiple": True}))
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        if isinstance(data, (list, tuple)):
            if not data:
                return [super().clean(None, initial)]
            return [super(SeveralFilesField, self).clean(item, initial) for item in data]
        return [super().clean(data, initial)]


class ImportForm(forms.Form):
    """One upload form for every import kind; the options each kind needs are checked."""

    kind = forms.ChoiceField(choices=import_kinds, label=_("What the file holds"))
    file = SeveralFilesField(
        label=_("File"),
        help_text=_("Document files: up to 100 at once, or a .zip of any number."),
    )
    format = forms.ChoiceField(choices=IMPORT_FORMATS, required=False, label=_("Format"))
    chunking = forms.CharField(
        required=False,
        max_length=200,
        label=_("Chunking"),
        help_text=_(
            "Chunks: the new chunking's name. Chunk labels and chunk runs: an existing one."
        ),
    )
    annotator = forms.CharField(
        required=False,
        max_length=150,
        label=_("Annotator"),
        help_text=_("Labels: the pseudo-annotator they belong to, e.g. llm-judge."),
    )
    level = forms.ChoiceField(
        choices=[
            ("document", _("Document")),
            ("chunk", _("Chunk")),
            ("passage", _("Passage (start, end)")),
            ("page", _("Page")),
        ],
        required=False,
        label=_("Label level"),
    )
    run_name = forms.CharField(required=False, max_length=200, label=_("Run name"))
    parameters = forms.CharField(
        required=False,
        max_length=2000,
        label=_("Run parameters"),
        help_text=_("One key=value per line: chunk size, embedding model, reranker, k …"),
        widget=forms.Textarea(attrs={"rows": 3}),
    )
    replace = forms.BooleanField(
        required=False,
        label=_("Replace changed files"),
        help_text=_(
            "Document files: replace a document whose file changed, when no labels are on it."
        ),
    )
    skip_bad = forms.BooleanField(
        required=False,
        label=_("Import the good files, skip the bad ones"),
        help_text=_(
            "Document files: without this, one bad file stops the whole import; with it, "
            "each bad file is listed with its reason."
        ),
    )
    html_whole_page = forms.BooleanField(
        required=False,
        label=_("Keep the whole HTML page"),
        help_text=_("HTML: menus, headers and footers too, not only the main content."),
    )
    docx_headers = forms.BooleanField(
        required=False,
        label=_("Word headers and footers"),
        help_text=_("Word: add the pages' headers and footers after the text."),
    )
    keep_known = forms.BooleanField(
        required=False,
        label=_("Import the known part"),
        help_text=_("Drop lines with unknown query or item ids instead of rejecting the file."),
    )

    # The options each kind uses; the page shows a kind's own (``fields_for_kinds``).
    KIND_FIELDS = {
        "chunking": ("chunks", "labels", "run"),
        "annotator": ("labels",),
        "level": ("labels",),
        "run_name": ("run",),
        "parameters": ("run",),
        "replace": ("files",),
        "skip_bad": ("files",),
        "html_whole_page": ("files",),
        "docx_headers": ("files",),
        "keep_known": ("run",),
    }

    def __init__(self, *args, project=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.project = project
        self.fields["kind"].widget.attrs["data-kind-switch"] = ""

    def fields_for_kinds(self) -> list[tuple]:
        """(bound field, the kinds it is for, space-separated; "" for every kind)."""
        table_kinds = " ".join(k.name for k in kinds() if not k.own_types)
        rows = []
        for name in self.fields:
            if name == "kind":
                continue
            listed = [*self.KIND_FIELDS.get(name, ()), *self._taking(name)]
            for_kinds = " ".join(listed)
            rows.append((self[name], table_kinds if name == "format" else for_kinds))
        return rows

    @staticmethod
    def _taking(name: str) -> list[str]:
        """Kinds registered by other apps that take the option ``name``."""
        return [k.name for k in kinds() if name in k.takes]

    def clean_file(self):
        from django.conf import settings

        files = self.cleaned_data["file"]
        if sum(f.size for f in files) > settings.ASSAY_MAX_UPLOAD_BYTES:
            raise forms.ValidationError(
                _("The file is larger than the limit of %(limit)s bytes."),
                params={"limit": settings.ASSAY_MAX_UPLOAD_BYTES},
            )
        if len(files) == 1 and files[0].size == 0:
            raise forms.ValidationError(_("The file is empty."))
        return files

    def clean(self):
        data = super().clean()
        kind = data.get("kind")
        chunking = data.get("chunking", "").strip()
        if kind != "files" and len(data.get("file") or []) > 1:
            self.add_error("file", _("Only document files can be uploaded several at once."))
        if kind == "chunks" and not chunking:
            self.add_error("chunking", _("Name the new chunking."))
        if kind == "labels":
            if not data.get("annotator", "").strip():
                self.add_error("annotator", _("Name the annotator the labels belong to."))
            if data.get("level") == "chunk" and not chunking:
                self.add_error("chunking", _("Chunk-level labels need their chunking."))
        if kind == "run" or kind in self._taking("run_name"):
            if not data.get("run_name", "").strip():
                self.add_error("run_name", _("Give the run a name."))
            params = {}
            for line in data.get("parameters", "").splitlines():
                if not line.strip():
                    continue
                key, sep, value = line.partition("=")
                if not sep or not key.strip():
                    self.add_error("parameters", _("Write each parameter as key=value."))
                    break
                params[key.strip()] = value.strip()
            data["parameters"] = params
        known = self.project is None or self.project.chunkings.filter(name=chunking).exists()
        if (
            (kind in ("labels", "run") or kind in self._taking("chunking"))
            and chunking
            and not known
        ):
            self.add_error("chunking", _("No chunking with this name."))
        return data

    def job_options(self) -> dict:
        data = self.cleaned_data
        kind = data["kind"]
        options = {"format": data.get("format") or ""}
        if kind == "chunks":
            options["chunking"] = data["chunking"].strip()
        elif kind == "labels":
            options.update(
                annotator=data["annotator"].strip(),
                level=data.get("level") or "document",
                chunking=data["chunking"].strip() or None,
            )
        elif kind == "files":
            for name in ("replace", "skip_bad", "html_whole_page", "docx_headers"):
                options[name] = bool(data.get(name))
        elif kind == "run":
            options.update(
                name=data["run_name"].strip(),
                chunking=data["chunking"].strip() or None,
                parameters=data["parameters"],
                keep_known=bool(data.get("keep_known")),
            )
        elif kind in self._taking("run_name"):
            options.update(
                name=data["run_name"].strip(),
                chunking=data["chunking"].strip() or None,
                parameters=data.get("parameters") or {},
            )
        return options


class SpanBoxesForm(forms.Form):
    """A span of a document's text whose boxes on the page images are asked for."""

    start = WholeField(min_value=0)
    end = WholeField(min_value=1)

    def clean(self):
        data = super().clean()
        if "start" in data and "end" in data and data["end"] <= data["start"]:
            raise forms.ValidationError(_("The span must end after it starts."))
        if "end" in data and "start" in data and data["end"] - data["start"] > 100_000:
            raise forms.ValidationError(_("The span is too long."))
        return data
