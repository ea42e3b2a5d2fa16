"""Every process that loads Django (a command, the worker, a web server) pays for what the
apps import at start-up: the LLM client libraries are imported only when a judge calls."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_django_setup_imports_no_llm_client(tmp_path):
    code = (
        "import sys, django; django.setup(); "
        "print(sorted(m for m in ('openai', 'httpx', 'httpcore', 'pydantic') if m in sys.modules))"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "ASSAY_DATA_DIR": str(tmp_path),
        "SECRET_KEY": "test",
        "ASSAY_DEBUG": "0",
        "DATABASE_URL": "",
    }
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_guarded_client_follows_no_redirect():
    from judges.endpoints import HostPolicy, guarded_client

    assert guarded_client(None, 5.0).follow_redirects is False
    assert guarded_client(HostPolicy.parse(["*"]), 5.0).follow_redirects is False
