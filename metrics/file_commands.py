"""What the commands on files share: no system checks, Assay's version, quiet broken pipes.

``manage.py`` runs these commands (its ``FILE_COMMANDS``, the one list of them) without
setting Django up, so they start without the web stack: no apps, models or database are
loaded.
"""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from formats import FileRejected

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def assay_version() -> str:
    with PYPROJECT.open("rb") as handle:
        return tomllib.load(handle)["project"]["version"]


class FileCommand(BaseCommand):
    """A command that reads files only; its ``--version`` is Assay's."""

    requires_system_checks: list = []

    def get_version(self) -> str:
        return f"Assay {assay_version()}"

    def execute(self, *args, **options):
        try:
            return super().execute(*args, **options)
        except FileRejected as error:
            message = f"{error.source}:\n{error}" if error.source else str(error)
            raise CommandError(message) from None
        except ValueError as error:
            raise CommandError(str(error)) from None
        except BrokenPipeError:
            # The reader went away (``| head``): stop quietly, as trec_eval does.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            sys.exit(1)

    def write_lines(self, lines) -> None:
        """All lines in one write (hundreds of thousands with ``-q``)."""
        text = "\n".join(lines)
        if text:
            self.stdout.write(text)
