#!/usr/bin/env python
"""Django's command-line utility for Assay."""

import importlib
import os
import sys

# Commands that read files only: run without setting Django up (no apps, no models, no
# database, no system checks), so that they start as fast as a plain script.
FILE_COMMANDS = ("trec_eval", "evaluate", "compare")


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    try:
        if len(sys.argv) > 1 and sys.argv[1] in FILE_COMMANDS:
            module = importlib.import_module(f"metrics.management.commands.{sys.argv[1]}")
            module.Command().run_from_argv(sys.argv)
            return
        from django.core.management import execute_from_command_line

        execute_from_command_line(sys.argv)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (`export_run … | head`): every command stops quietly, as
        # trec_eval does; what Python would still flush goes nowhere.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)


if __name__ == "__main__":
    main()
