"""Assay settings. Everything that differs between machines comes from the environment.

Local defaults are safe for a laptop (SQLite in ./var, DEBUG on, localhost only);
production sets ASSAY_DEBUG=0, SECRET_KEY, ALLOWED_HOSTS and, usually, DATABASE_URL.
"""

import contextlib
import os
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlparse

from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
TRUE_WORDS = {"1", "true", "yes", "on"}
FALSE_WORDS = {"0", "false", "no", "off", ""}


def env_bool(name: str, default: bool) -> bool:
    """A yes/no setting; a word that is neither is an error, never a silent False."""
    value = os.environ.get(name)
    if value is None:
        return default
    word = value.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise ImproperlyConfigured(f"{name}={value!r}: use one of 1/0, true/false, yes/no, on/off")


def env_int(name: str, default: int, *, minimum: int = 0) -> int:
    """A whole-number setting; anything else (or below ``minimum``) is an error."""
    value = os.environ.get(name)
    if value is None or not value.strip():
        return default
    try:
        number = int(value.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r}: expected a whole number") from None
    if number < minimum:
        raise ImproperlyConfigured(f"{name}={value!r}: must be at least {minimum}")
    return number


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def database_from_url(url: str) -> dict:
    """Parse postgres://user:pass@host:port/name?opt=val into a DATABASES entry."""
    parsed = urlparse(url)
    if parsed.scheme not in {"postgres", "postgresql", "pgsql"}:
        raise ValueError(f"DATABASE_URL: unsupported scheme {parsed.scheme!r} (use postgres://)")
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(parsed.path.lstrip("/")) or "postgres",
        "USER": unquote(parsed.username or ""),
        "PASSWORD": unquote(parsed.password or ""),
        "HOST": parsed.hostname or "",
        "PORT": str(parsed.port or ""),
        "OPTIONS": dict(parse_qsl(parsed.query)),
        "CONN_MAX_AGE": env_int("ASSAY_CONN_MAX_AGE", 60),
        "CONN_HEALTH_CHECKS": True,
    }


DEBUG = env_bool("ASSAY_DEBUG", True)
DATA_DIR = Path(os.environ.get("ASSAY_DATA_DIR", BASE_DIR / "var"))
# bin/start generates this file once (mode 600) and keeps it with the data it protects.
SECRET_KEY_FILE = DATA_DIR / "secret_key"


def secret_key() -> str:
    """SECRET_KEY from the environment, else from the data directory's key file; only a
    debugging instance may run on the fixed development key."""
    key = os.environ.get("SECRET_KEY", "").strip()
    if not key and SECRET_KEY_FILE.is_file():
        key = SECRET_KEY_FILE.read_text().strip()
    if key:
        return key
    if not DEBUG:
        raise ImproperlyConfigured(
            f"ASSAY_DEBUG=0 needs SECRET_KEY or a key in {SECRET_KEY_FILE} (bin/start writes one)"
        )
    return "insecure-local-development-key-do-not-use-in-production"


SECRET_KEY = secret_key()

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "operations",  # before django_tasks_db: its db_worker command replaces theirs
    "django_tasks",
    "django_tasks_db",
    "accounts",
    "annotator",
    "gold",
    "metrics",
    "api",
    "judges",
    "nuggets",
    "answers",
    "demo",
    "backups",
    "quality",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "api.middleware.JsonErrorsMiddleware",
    "operations.security.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    # Before anything reads the body (the CSRF check does): refuse it by its size.
    "operations.limits.RequestBodyLimitMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "config.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

if os.environ.get("DATABASE_URL"):
    DATABASES = {"default": database_from_url(os.environ["DATABASE_URL"])}
else:
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": DATA_DIR / "assay.sqlite3",
            # WAL lets annotators save while others read; IMMEDIATE avoids
            # "database is locked" upgrades from read to write transactions.
            "OPTIONS": {
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
                "init_command": (
                    "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
                    "PRAGMA foreign_keys=ON; PRAGMA busy_timeout=20000;"
                ),
            },
            "TEST": {"NAME": os.environ.get("ASSAY_TEST_SQLITE")},
        }
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Login throttling (accounts.throttle): this many wrong passwords for one user name
# within the window lock that name out until the window has passed.
ASSAY_LOGIN_ATTEMPTS = env_int("ASSAY_LOGIN_ATTEMPTS", 5, minimum=1)
ASSAY_LOGIN_LOCKOUT_MINUTES = env_int("ASSAY_LOGIN_LOCKOUT_MINUTES", 15, minimum=1)
# Password-reset mails: at most this many to one address an hour (further requests get the
# same answer and send nothing).
ASSAY_RESET_MAILS_PER_HOUR = env_int("ASSAY_RESET_MAILS_PER_HOUR", 3, minimum=1)

# Password reset mails. The console backend (the default) writes them to the server's
# output; set ASSAY_EMAIL_BACKEND=django.core.mail.backends.smtp.EmailBackend and the
# EMAIL_* variables to send them.
EMAIL_BACKEND = os.environ.get(
    "ASSAY_EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend"
)
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "assay@localhost")

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "annotator:project_list"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = os.environ.get("ASSAY_TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(os.environ.get("ASSAY_STATIC_ROOT", DATA_DIR / "static"))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)


def file_storage(url: str) -> dict:
    """Where uploads, originals and page images go (annotator.file_store): the data
    folder, or S3-compatible object storage named by ``ASSAY_STORAGE_URL``,
    ``s3://BUCKET[/PREFIX][?endpoint_url=…&region=…&addressing_style=path|virtual]``.
    Credentials come from the standard ``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY``
    (or an instance role), never from the URL."""
    if not url:
        return {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(DATA_DIR), "allow_overwrite": True},
        }
    parsed = urlparse(url)
    if parsed.scheme != "s3" or not parsed.hostname:
        raise ImproperlyConfigured("ASSAY_STORAGE_URL must look like s3://bucket/prefix")
    if parsed.username or parsed.password:
        raise ImproperlyConfigured(
            "ASSAY_STORAGE_URL holds no credentials: set AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY"
        )
    query = dict(parse_qsl(parsed.query))
    unknown = set(query) - {"endpoint_url", "region", "addressing_style"}
    if unknown:
        raise ImproperlyConfigured(f"ASSAY_STORAGE_URL: unknown option(s) {sorted(unknown)}")
    return {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": parsed.hostname,
            "location": parsed.path.strip("/"),
            "endpoint_url": query.get("endpoint_url") or None,
            "region_name": query.get("region") or None,
            "addressing_style": query.get("addressing_style") or None,
            "file_overwrite": True,
            "default_acl": None,
            "querystring_auth": False,
        },
    }


STORAGES = {
    "default": file_storage(os.environ.get("ASSAY_STORAGE_URL", "")),
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}

# Uploads: files above this many bytes are refused before parsing.
ASSAY_MAX_UPLOAD_BYTES = env_int("ASSAY_MAX_UPLOAD_BYTES", 200 * 1024 * 1024, minimum=1)
# API run uploads above this are read by the worker (202 and a job to poll), not in the
# web request.
ASSAY_API_INLINE_RUN_BYTES = env_int("ASSAY_API_INLINE_RUN_BYTES", 8 * 1024 * 1024, minimum=0)


CGROUP_MEMORY_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


def machine_memory_mb(limit_files=CGROUP_MEMORY_LIMITS) -> int | None:
    """This machine's memory, or the container's limit when lower (cgroup v2 or v1), in MiB;
    None when neither can be read."""
    sizes = []
    with contextlib.suppress(OSError, ValueError, AttributeError):
        sizes.append(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    for limit in limit_files:
        with contextlib.suppress(OSError, ValueError):
            sizes.append(int(Path(limit).read_text().strip()))  # "max": no limit, skipped
    return min(sizes) // 1024**2 if sizes else None


def default_run_cache_mb(memory_mb: int | None) -> int:
    """A sixth of the memory, at least 512 MiB: a project of 1,000,000 documents needs
    about 4 GiB for its warm pages to stay warm (docs/benchmarks.md, "Large on
    PostgreSQL"); a small one only uses what it needs."""
    return max(512, (memory_mb or 0) // 6)


# Per-process cache of ranked, indexed runs, levels' units and what dashboards derive
# from labels (numerics.array_cache): each web process and worker has its own.
ASSAY_RUN_CACHE_BYTES = (
    env_int("ASSAY_RUN_CACHE_MB", default_run_cache_mb(machine_memory_mb()), minimum=1) * 1024**2
)
# After a request during which the garbage collector's full collection took this many
# milliseconds or more, what the process keeps (modules, templates, the cache above) is
# frozen out of later full collections (operations.long_lived); 0 turns it off.
ASSAY_GC_FREEZE_MS = env_int("ASSAY_GC_FREEZE_MS", 10)
# Each run's index at its own level, kept as a file so that a fresh process reads it
# instead of building it (metrics.run_indexes); derived data, safe to delete.
ASSAY_RUN_INDEX_DIR = Path(os.environ.get("ASSAY_RUN_INDEX_DIR", DATA_DIR / "run-index"))
# Document files (PDF, DOCX, HTML, Markdown, text): what extracting one file may take.
ASSAY_MAX_PAGES = env_int("ASSAY_MAX_PAGES", 5000, minimum=1)
ASSAY_MAX_DOCUMENT_CHARS = env_int("ASSAY_MAX_DOCUMENT_CHARS", 20_000_000, minimum=1)
ASSAY_EXTRACT_SECONDS = env_int("ASSAY_EXTRACT_SECONDS", 300, minimum=1)
# What the .zip archives of one import may unpack to, all together.
ASSAY_MAX_UNPACKED_BYTES = env_int("ASSAY_MAX_UNPACKED_BYTES", 2 * 1024**3, minimum=1)
# Copies of files from object storage, for readers that need a path (annotator.file_store).
ASSAY_FILE_CACHE_DIR = Path(os.environ.get("ASSAY_FILE_CACHE_DIR", DATA_DIR / "file-cache"))
# Request bodies (operations.limits): no body is larger than the upload limit plus
# DATA_UPLOAD_MAX_MEMORY_SIZE (the form's other fields, held in memory); anonymous
# clients may send at most ASSAY_ANONYMOUS_BODY_BYTES (a sign-in form needs little).
# Uploaded files over FILE_UPLOAD_MAX_MEMORY_SIZE go to a temporary file, which the
# body's checked size bounds.
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
ASSAY_ANONYMOUS_BODY_BYTES = env_int("ASSAY_ANONYMOUS_BODY_BYTES", 256 * 1024, minimum=1)

# LLM judges configured on the web may call only these hosts (judges.endpoints): * for any
# public host, host names (.example.org for its subdomains), IP addresses or networks
# (10.1.2.0/24). Judges added with manage.py add_judge are the operator's and may call any.
ASSAY_JUDGE_ALLOWED_HOSTS = env_list("ASSAY_JUDGE_ALLOWED_HOSTS", "*")
# Long jobs (judging, imports) hold a lease their worker renews; a job whose lease is
# older than this is taken over by the next free worker (operations.leases). On SIGTERM
# a worker lets the calls in flight finish for at most ASSAY_WORKER_GRACE_SECONDS (≤ 10).
ASSAY_JOB_LEASE_SECONDS = env_int("ASSAY_JOB_LEASE_SECONDS", 60, minimum=1)
ASSAY_WORKER_GRACE_SECONDS = min(10, env_int("ASSAY_WORKER_GRACE_SECONDS", 8, minimum=0))
# A judging job pauses after this many connection errors, timeouts or 5xx in a row.
ASSAY_JUDGE_BREAKER = env_int("ASSAY_JUDGE_BREAKER", 5, minimum=1)

# Two queues: "default" (imports, index builds) and "judging" (LLM judges, nugget
# proposals), so that an import never waits behind a long judging job. bin/start runs a
# worker for each (manage.py db_worker --queue-name default / judging); a lone
# `manage.py db_worker` takes both, one task at a time.
TASKS = {
    "default": {
        "BACKEND": os.environ.get("ASSAY_TASK_BACKEND", "django_tasks_db.DatabaseBackend"),
        "QUEUES": ["default", "judging"],
    }
}

# HTTPS. ASSAY_HTTPS says whether browsers reach Assay over https (directly or through
# a TLS proxy); it defaults to on when not debugging and turns on secure cookies, the
# redirect to https and HSTS. ASSAY_HTTPS=0 is plain http on a trusted network (what
# bin/start serves on 127.0.0.1): cookies must then travel over http, and the deploy
# checks that only make sense over https are silenced, since they cannot hold there.
HTTPS = env_bool("ASSAY_HTTPS", not DEBUG)
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
SECURE_SSL_REDIRECT = env_bool("ASSAY_SSL_REDIRECT", HTTPS)
SECURE_HSTS_SECONDS = env_int("ASSAY_HSTS_SECONDS", 31536000 if HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_HSTS_SECONDS > 0
SECURE_HSTS_PRELOAD = SECURE_HSTS_SECONDS > 0
if not HTTPS:
    SILENCED_SYSTEM_CHECKS = ["security.W004", "security.W008", "security.W012", "security.W016"]
# A request counts as https because of a proxy's header only when the operator names
# the header their TLS proxy sets (and strips from clients), e.g. X-Forwarded-Proto;
# trusting it unconfigured would let any client claim https.
PROXY_SSL_HEADER = os.environ.get("ASSAY_PROXY_SSL_HEADER", "").strip()
if PROXY_SSL_HEADER:
    SECURE_PROXY_SSL_HEADER = ("HTTP_" + PROXY_SSL_HEADER.upper().replace("-", "_"), "https")
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Every asset comes from Assay itself (no CDN, no inline script or style).
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'; "
    "object-src 'none'"
)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # A refusal (403) is the access rule working, not a fault: one line, no traceback.
    "filters": {"refusals_in_one_line": {"()": "operations.logs.RefusalsInOneLine"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler", "filters": ["refusals_in_one_line"]}
    },
    "root": {"handlers": ["console"], "level": os.environ.get("ASSAY_LOG_LEVEL", "WARNING")},
}
