"""Failures of a web-configured judge's endpoint say one sentence ("the endpoint did not
answer as an OpenAI-compatible server"); those stored before (every judge then counts as
configured on the web) are rewritten the same way, so no page tells open from closed ports."""

from django.db import migrations, models

ENDPOINT_FAILURES = (
    "timeout",
    "unreachable",
    "rate_limited",
    "server_error",
    "auth",
    "not_found",
    "bad_request",
)
ENDPOINT_DETAILS = ("judge_call.unreadable", "judge_call.no_answer")
NOT_OPENAI = {"code": "judge_call.not_openai", "params": {}}


def one_sentence(apps, schema_editor):
    JudgePair = apps.get_model("judges", "JudgePair")
    web = JudgePair.objects.filter(job__version__judge__configured_by_operator=False)
    web.filter(failure__in=ENDPOINT_FAILURES).update(failure="endpoint", detail=NOT_OPENAI)
    for pair in web.filter(failure="malformed").exclude(detail=None).only("pk", "detail"):
        if getattr(pair.detail, "code", None) in ENDPOINT_DETAILS:
            JudgePair.objects.filter(pk=pair.pk).update(failure="endpoint", detail=NOT_OPENAI)


class Migration(migrations.Migration):
    dependencies = [
        ("judges", "0005_judge_configured_by_operator"),
    ]

    operations = [
        migrations.AlterField(
            model_name="judgepair",
            name="failure",
            field=models.CharField(
                blank=True,
                choices=[
                    ("malformed", "Malformed answer"),
                    ("empty", "Empty answer"),
                    ("too_long", "Answer too long"),
                    ("refusal", "Refusal"),
                    ("timeout", "Timeout"),
                    ("rate_limited", "Rate limited"),
                    ("server_error", "Server error"),
                    ("unreachable", "Endpoint unreachable"),
                    ("auth", "API key refused"),
                    ("not_found", "Unknown model or endpoint"),
                    ("bad_request", "Request refused"),
                    ("no_key", "API key not available"),
                    ("budget", "Budget reached"),
                    ("endpoint", "No OpenAI-compatible answer"),
                    ("no_evidence", "No relevant evidence to send"),
                ],
                max_length=16,
            ),
        ),
        migrations.RunPython(one_sentence, migrations.RunPython.noop),
    ]
