from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils.text import slugify

from annotator.cli import project_named
from judges.models import LIMITS
from judges.services import JudgeError, create_judge

# Each flag with a range and the judge setting whose range (judges.models.LIMITS) it has.
FLAGS = (
    ("--temperature", "temperature", "temperature"),
    ("--max-tokens", "max_tokens", "max_tokens"),
    ("--timeout", "timeout", "timeout_seconds"),
    ("--concurrency", "concurrency", "concurrency"),
    ("--rpm", "rpm", "rpm"),
    ("--budget", "budget", "budget"),
)


class Command(BaseCommand):
    help = (
        "Add an LLM judge to a project: an OpenAI-compatible endpoint and model; the API key "
        "is read at run time from the environment variable named by --api-key-env "
        "(ASSAY_JUDGE_KEY_<NAME>). A judge added here is the operator's: it may call any "
        "host (a model server on loopback too) and use any ASSAY_JUDGE_KEY_* variable."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the project's slug")
        parser.add_argument("name", help="the judge's name (its slug is derived from it)")
        parser.add_argument("--base-url", required=True, help="e.g. https://api.openai.com/v1")
        parser.add_argument("--model", required=True)
        parser.add_argument(
            "--api-key-env",
            required=True,
            help="NAME of the variable holding the key: ASSAY_JUDGE_KEY_<NAME>",
        )
        parser.add_argument(
            "--prompt", help="a file with the prompt template (default: UMBRELA-style)"
        )
        parser.add_argument("--temperature", type=float, default=0.0, help="0 to 2")
        parser.add_argument(
            "--max-tokens", type=int, default=200, help="the most tokens an answer may take"
        )
        parser.add_argument(
            "--timeout", type=float, default=60.0, help="seconds to wait for one answer (≤ 300)"
        )
        parser.add_argument("--concurrency", type=int, default=4, help="calls at a time (≤ 16)")
        parser.add_argument(
            "--rpm", type=int, default=60, help="requests per minute (0: no limit; ≤ 10000)"
        )
        parser.add_argument(
            "--budget", type=int, default=1000, help="maximum calls per job (≤ 100000)"
        )

    def handle(self, *args, **options):
        project = project_named(options["slug"])
        prompt = None
        if options["prompt"]:
            try:
                prompt = Path(options["prompt"]).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as error:
                raise CommandError(f"cannot read the prompt file: {error}") from None
        for flag, option, setting in FLAGS:
            low, high = LIMITS[setting]
            if not low <= options[option] <= high:
                raise CommandError(f"{flag} must be between {low:g} and {high:g}")
        slug = slugify(options["name"])[:40]
        if not slug:
            raise CommandError("the judge's name needs at least one letter or digit")
        try:
            judge = create_judge(
                project,
                slug=slug,
                name=options["name"],
                prompt=prompt,
                base_url=options["base_url"],
                model=options["model"],
                api_key_env=options["api_key_env"],
                temperature=options["temperature"],
                max_tokens=options["max_tokens"],
                timeout_seconds=options["timeout"],
                concurrency=options["concurrency"],
                rpm=options["rpm"],
                budget=options["budget"],
                by_operator=True,
            )
        except JudgeError as error:
            raise CommandError(str(error)) from None
        except Exception as error:  # full_clean's ValidationError
            messages = getattr(error, "message_dict", None)
            if messages is None:
                raise
            detail = "; ".join(f"{k}: {' '.join(v)}" for k, v in messages.items())
            raise CommandError(detail) from None
        self.stdout.write(
            f"{project.slug}: judge {judge.slug} ({judge.model} at {judge.base_url}), version 1; "
            f"key from ${judge.api_key_env}"
        )
