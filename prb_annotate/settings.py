"""Settings for prb-annotate, read from the environment.

SQLite is the embedded default (a file in ``var/``); ``DATABASE_URL`` selects PostgreSQL for
real campaigns. Everything a deployment changes is an environment variable.
"""

import math
import os
import re
import secrets
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import dj_database_url
import django_stubs_ext
from django.core.exceptions import ImproperlyConfigured

# Lets the admin and generic views be subscripted with their model type at run time.
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent


# A variable that is not of its kind stops the start, naming itself: a typo must neither crash
# with a bare traceback nor read as "off" (SESSION_COOKIE_SECURE=ture would drop a protection).
# Unset or empty means the default.
TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off"})


def envbool(name: str, default: bool) -> bool:
    word = os.environ.get(name, "").strip().lower()
    if not word:
        return default
    if word in TRUE_WORDS | FALSE_WORDS:
        return word in TRUE_WORDS
    raise ImproperlyConfigured(
        f"{name} must be true or false (or 1/0, yes/no, on/off), not {word!r}."
    )


def envint(name: str, default: int, *, minimum: int = 0, maximum: int | None = None) -> int:
    return envnumber(name, default, int, minimum, maximum)


def envfloat(
    name: str, default: float, *, minimum: float = 0.0, maximum: float | None = None
) -> float:
    return envnumber(name, default, float, minimum, maximum)


Number = TypeVar("Number", int, float)
KIND_WORDS = {int: "a whole number", float: "a finite number"}


def envnumber(
    name: str, default: Number, kind: type[Number], minimum: Number, maximum: Number | None
) -> Number:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or not math.isfinite(value):
        raise ImproperlyConfigured(f"{name} must be {KIND_WORDS[kind]}, not {text!r}.")
    if value < minimum or (maximum is not None and value > maximum):
        bounds = f"at least {minimum}" if maximum is None else f"from {minimum} to {maximum}"
        raise ImproperlyConfigured(f"{name} must be {bounds}, not {text!r}.")
    return value


def envchoice(name: str, default: str, choices: Sequence[str]) -> str:
    """One of ``choices`` (as written there, whatever the case given)."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    by_case = {choice.casefold(): choice for choice in choices}
    if text.casefold() not in by_case:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}, not {text!r}.")
    return by_case[text.casefold()]


def envlist(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def envpair(name: str) -> tuple[str, str] | None:
    """``"A,B"`` as ``("A", "B")``; None when unset or empty."""
    items = envlist(name, "")
    if not items:
        return None
    if len(items) != 2:
        raise ImproperlyConfigured(f"{name} must be two values separated by a comma.")
    return items[0], items[1]


DEBUG = envbool("DEBUG", False)
ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "django_tasks",
    "django_tasks_db",
    "prb_annotate",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "prb_annotate.security.headers.ContentSecurityPolicyMiddleware",
    # Cache-Control: no-store for logged-in users and the API (it reads request.user when the
    # response comes back, after the authentication middleware below has set it).
    "prb_annotate.security.headers.NoStoreMiddleware",
    # NUL in the path or query, a body over the upload limit: 400 / 413 before anything reads
    # them (prb_annotate/security/request_limits.py).
    "prb_annotate.security.request_limits.RequestLimitsMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The chooser's cookie, else Accept-Language; after the session, before CommonMiddleware.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # The signed cookie of a successful login (prb_annotate/security/logins.py: a known browser).
    "prb_annotate.security.logins.KnownLoginCookieMiddleware",
    # English for the API; the account's chosen language; a campaign's on its participants'
    # pages (prb_annotate/languages/middleware.py). After authentication, which it reads.
    "prb_annotate.languages.middleware.LanguageMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # The database restarting or locked: 503 with Retry-After, not 500 (docs/operations.md).
    "prb_annotate.db.outage.DatabaseUnavailableMiddleware",
]

ROOT_URLCONF = "prb_annotate.urls"
WSGI_APPLICATION = "prb_annotate.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                # LANGUAGE_CODE and LANGUAGES for <html lang> and the header's chooser.
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATA_DIR = Path(os.environ.get("PRB_DATA_DIR", str(BASE_DIR / "var")))
DEFAULT_SQLITE_URL = f"sqlite:///{DATA_DIR / 'prb_annotate.sqlite3'}"
# Unset or empty (``DATABASE_URL= make test``) means the SQLite default.
DATABASE_URL = os.environ.get("DATABASE_URL") or DEFAULT_SQLITE_URL
if DATABASE_URL == DEFAULT_SQLITE_URL:
    DATA_DIR.mkdir(parents=True, exist_ok=True)


# Faults survived (docs/operations.md). A kept connection is checked before a request reuses
# it, so workers serve again by themselves once a restarted database is back; a SQLite writer
# waits this long for the write lock, then its request answers 503 with Retry-After.
CONN_HEALTH_CHECKS = True
SQLITE_BUSY_TIMEOUT_S = envfloat("PRB_SQLITE_BUSY_TIMEOUT_S", 30.0)


def database_settings(url: str) -> dict[str, Any]:
    config: dict[str, Any] = dict(
        dj_database_url.parse(url, conn_max_age=60, conn_health_checks=CONN_HEALTH_CHECKS)
    )
    # Each test run gets its own database name so that concurrent runs on one machine
    # (several checkouts, CI beside a developer) never drop each other's database.
    test_suffix = os.environ.get("PRB_TEST_DB_SUFFIX", str(os.getpid()))
    if config["ENGINE"] == "django.db.backends.sqlite3":
        config["OPTIONS"] = {
            # IMMEDIATE takes the write lock when a transaction starts, so two writers queue on
            # the busy timeout instead of one failing with "database is locked" mid-transaction.
            "transaction_mode": "IMMEDIATE",
            "timeout": SQLITE_BUSY_TIMEOUT_S,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
        # A file, not Django's shared in-memory database: WAL and the busy timeout then behave
        # in the tests exactly as in production (threads get real connections and locks).
        config["TEST"] = {
            "NAME": str(Path(tempfile.gettempdir()) / f"prb_test_{test_suffix}.sqlite3")
        }
    else:
        config["TEST"] = {"NAME": f"test_prb_{test_suffix}"}
    return config


DATABASES = {"default": database_settings(DATABASE_URL)}

# The key signs sessions and cookies and derives the export pseudonyms: whoever knows it can map
# a pseudonym back to a user id. A key everyone can read (this file's) serves the tests alone.
TEST_SECRET_KEY = "insecure-test-key-set-SECRET_KEY-in-production"
NO_SECRET_KEY = (
    "SECRET_KEY is not set. A server on its own database (DATABASE_URL) needs a long random "
    "key of its own, the same for every process and host: "
    "export SECRET_KEY=\"$(python -c 'import secrets; print(secrets.token_urlsafe(50))')\" "
    "(docs/deployment.md)."
)


def installation_key(folder: Path) -> str:
    """The key kept in ``folder/secret_key``, made on first use (readable by its owner only).

    Made in a temporary file and linked into place, so that processes starting together all
    read the one key that won, never a half-written file.
    """
    path = folder / "secret_key"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=".secret_key-")
        with os.fdopen(descriptor, "w") as file:
            file.write(secrets.token_urlsafe(50))
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass  # another process made it first: use theirs
        finally:
            os.unlink(temporary)
    return path.read_text().strip()


def secret_key() -> str:
    """``SECRET_KEY``; else the tests' fixed key under pytest; else, for the demo's SQLite file
    or with DEBUG, a key made for this installation in PRB_DATA_DIR. Any other server refuses
    to start without one (ImproperlyConfigured)."""
    key = os.environ.get("SECRET_KEY", "").strip()
    if key:
        return key
    if os.environ.get("PYTEST_VERSION"):
        return TEST_SECRET_KEY
    if DEBUG or DATABASE_URL == DEFAULT_SQLITE_URL:
        return installation_key(DATA_DIR)
    raise ImproperlyConfigured(NO_SECRET_KEY)


SECRET_KEY = secret_key()


# The address the site is served at, for the full links that commands print (study link,
# sign-up invite, set-password links). `make demo PORT=8100` records its address in
# PRB_DATA_DIR, so the commands a newcomer runs beside the demo print links that connect.
DEFAULT_SITE_URL = "http://127.0.0.1:8000"
SITE_URL_FILE = "site_url"


def site_url(folder: Path) -> str:
    """``PRB_SITE_URL``; else the address ``demo_setup --address`` recorded in ``folder``;
    else the demo's default address."""
    configured = os.environ.get("PRB_SITE_URL", "").strip()
    if configured:
        return configured.rstrip("/")
    recorded = folder / SITE_URL_FILE
    if recorded.is_file():
        return recorded.read_text().strip().rstrip("/") or DEFAULT_SITE_URL
    return DEFAULT_SITE_URL


SITE_URL = site_url(DATA_DIR)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
# Login throttling (security/logins.py): failures of a username from one address, and from
# one address whatever the username, within the window lock further logins from there until
# they age out or a manager unlocks them; failures of a username from anywhere, within a longer
# window, lock it for every address and browser it has not logged in from before.
LOGIN_FAILURES_PER_USERNAME = envint("LOGIN_FAILURES_PER_USERNAME", 5, minimum=1)
LOGIN_FAILURES_PER_ADDRESS = envint("LOGIN_FAILURES_PER_ADDRESS", 20, minimum=1)
LOGIN_LOCKOUT_MINUTES = envint("LOGIN_LOCKOUT_MINUTES", 15, minimum=1)
LOGIN_FAILURES_PER_USERNAME_ANYWHERE = envint("LOGIN_FAILURES_PER_USERNAME_ANYWHERE", 30, minimum=1)
LOGIN_USERNAME_LOCKOUT_MINUTES = envint("LOGIN_USERNAME_LOCKOUT_MINUTES", 60, minimum=1)
# How long a successful login makes its address and browser known to that username.
LOGIN_KNOWN_DAYS = envint("LOGIN_KNOWN_DAYS", 90)
# API tokens stop working this many days after they were made (0: they never expire); a new
# one comes from /api/token/ or the account's "API token" page.
API_TOKEN_MAX_AGE_DAYS = envint("API_TOKEN_MAX_AGE_DAYS", 0)
# Invite links (prb_annotate/campaigns/join_limits.py): the accounts one network (an IPv4 /24,
# an IPv6 /48) may make within PRB_JOIN_WINDOW_MINUTES, as a share of the campaign's slots (at
# least one).
PRB_JOIN_SHARE_PER_ADDRESS = envfloat("PRB_JOIN_SHARE_PER_ADDRESS", 0.10, maximum=1.0)
PRB_JOIN_WINDOW_MINUTES = envint("PRB_JOIN_WINDOW_MINUTES", 60, minimum=1)
# The share of a campaign's slots that the accounts one network made through the invite link may
# hold at any time, answered or reserved (prb_annotate/campaigns/network_share.py; at least one;
# 1.0 for a lab study whose participants all come from one network).
PRB_SLOT_SHARE_PER_NETWORK = envfloat("PRB_SLOT_SHARE_PER_NETWORK", 0.10, maximum=1.0)
# Behind a reverse proxy: the request header holding the client's address (HTTP_X_REAL_IP).
LOGIN_CLIENT_ADDRESS_HEADER = os.environ.get("LOGIN_CLIENT_ADDRESS_HEADER", "")

# One-time "set your password" links for accounts a manager makes (campaigns/accounts.py):
# Django's password-reset tokens, valid this long at most.
PASSWORD_RESET_TIMEOUT = envint("SET_PASSWORD_LINK_DAYS", 7, minimum=1) * 24 * 3600
# Email is sent only when a server is configured; otherwise links are shown to the manager.
EMAIL_HOST = os.environ.get("EMAIL_HOST", "")
EMAIL_PORT = envint("EMAIL_PORT", 587, minimum=1, maximum=65535)
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = envbool("EMAIL_USE_TLS", True)
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "prb-annotate@localhost")
PRB_SEND_EMAIL = bool(EMAIL_HOST)

# The interface's languages (docs/i18n.md says how to add one): each code with its name as its
# readers write it, for the header's chooser. English is the fallback and the API's language.
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("ko", "한국어")]
LOCALE_PATHS = [BASE_DIR / "prb_annotate" / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# The largest uploaded file, and the largest request body besides a file's
# (prb_annotate/security/request_limits.py answers 413 past it, naming the limit) ...
PRB_UPLOAD_MAX_BYTES = envint("PRB_UPLOAD_MAX_BYTES", 50 * 1024 * 1024, minimum=1)
DATA_UPLOAD_MAX_MEMORY_SIZE = PRB_UPLOAD_MAX_BYTES
# ... and what an uploaded compressed file (Parquet) may decode to when it is read
# (prb_annotate/datasets/parquet_limits.py): five times the upload limit by default.
PRB_UPLOAD_MAX_EXPANDED_BYTES = envint(
    "PRB_UPLOAD_MAX_EXPANDED_BYTES", 5 * PRB_UPLOAD_MAX_BYTES, minimum=1
)

# HTTPS (docs/deployment.md, "A production layout"): all off by default so that the demo runs
# on plain HTTP.
SESSION_COOKIE_SECURE = envbool("SESSION_COOKIE_SECURE", False)
CSRF_COOKIE_SECURE = envbool("CSRF_COOKIE_SECURE", False)
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", False)
# Behind a TLS-terminating proxy: "HTTP_X_FORWARDED_PROTO,https" (header, value that means
# HTTPS). Set it only when the proxy always sets or overwrites that header.
SECURE_PROXY_SSL_HEADER = envpair("SECURE_PROXY_SSL_HEADER")
# Only the app's own scripts and styles (security/headers.py); no inline code, no other host.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "font-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        # DRF's TokenAuthentication, reading token and user in one plain query.
        "prb_annotate.api.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # JSON, and DRF's browsable API without its inline styles (Content-Security-Policy).
    "DEFAULT_RENDERER_CLASSES": [
        "prb_annotate.api.renderers.StrictJSONRenderer",
        "prb_annotate.api.renderers.BrowsableAPIRenderer",
    ],
    # DRF's parsers, with a JSON parser that refuses absurdly nested bodies with a 400.
    "DEFAULT_PARSER_CLASSES": [
        "prb_annotate.api.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    # drf-spectacular's, documenting the 4xx answers and their shared error body too.
    "DEFAULT_SCHEMA_CLASS": "prb_annotate.api.schema.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    # Every 4xx body is {"detail": ..., "errors": {field: [messages]}}.
    "EXCEPTION_HANDLER": "prb_annotate.api.errors.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "prb-annotate API",
    "DESCRIPTION": "Annotation campaigns, agreement audits and validated exports "
    "for personalized preference datasets.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Names for choice sets whose fields share a name with another's ("kind", "status").
    "ENUM_NAME_OVERRIDES": {
        "CampaignStatusEnum": "prb_annotate.api.enums.CAMPAIGN_STATUSES",
        "JobKindEnum": "prb_annotate.api.enums.JOB_KINDS",
        "JobStatusEnum": "prb_annotate.api.enums.JOB_STATUSES",
    },
}

# Import limits: a text field longer than this is reported as an error, not stored.
PRB_MAX_TEXT_CHARS = envint("PRB_MAX_TEXT_CHARS", 100_000, minimum=1)

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": envchoice("LOG_LEVEL", "WARNING", LOG_LEVELS)},
}

# Serve app static files straight from the app folders too, so the demo needs no collectstatic;
# production still runs collectstatic and serves the compressed copies.
WHITENOISE_USE_FINDERS = True
# Before any collectstatic, STATIC_ROOT does not exist, and the finders serve everything: that
# is the demo's normal state, not something to warn about on every start.
warnings.filterwarnings(
    "ignore", message=f"No directory at: {re.escape(str(STATIC_ROOT))}", category=UserWarning
)


# Background jobs (prb_annotate/jobs/): Django's Tasks API through the django-tasks backport. The
# database backend is the default: its worker is ``manage.py db_worker``, no other service.
# PRB_TASKS_BACKEND=rq puts the jobs in Redis (REDIS_URL) for RQ workers (``manage.py rqworker``)
# on this or other machines. Scoring has a queue of its own, so a GPU machine's worker can take
# only scoring; every other kind goes to "default".
PRB_JOB_QUEUES = {"score": "scoring"}
# Every queue a job may go to: the backends' QUEUES and the worker command the pages give.
JOB_QUEUE_NAMES = ["default", *sorted(set(PRB_JOB_QUEUES.values()) - {"default"})]
PRB_TASKS_BACKEND = os.environ.get("PRB_TASKS_BACKEND", "database").strip().lower()
if PRB_TASKS_BACKEND == "rq":
    INSTALLED_APPS += ["django_rq", "django_tasks_rq"]
    REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    # RQ stops a job after DEFAULT_TIMEOUT seconds; scoring a large campaign takes hours.
    RQ_QUEUES = {
        name: {"URL": REDIS_URL, "DEFAULT_TIMEOUT": envint("PRB_JOB_TIMEOUT_S", 86_400, minimum=1)}
        for name in JOB_QUEUE_NAMES
    }
    TASKS = {"default": {"BACKEND": "django_tasks_rq.RQBackend", "QUEUES": JOB_QUEUE_NAMES}}
elif PRB_TASKS_BACKEND == "database":
    TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": JOB_QUEUE_NAMES}}
else:
    raise ImproperlyConfigured(
        f"PRB_TASKS_BACKEND is {PRB_TASKS_BACKEND!r}; set it to database (the default) or rq."
    )
# Where finished jobs keep their result files (until the job is removed).
PRB_JOB_DIR = DATA_DIR / "jobs"
# The folders whose model folders a scoring job may load (separated by ":"); a form or the API
# names a model under one of them, never any other path.
PRB_MODEL_ROOTS = [root for root in os.environ.get("PRB_MODEL_ROOTS", "").split(":") if root]
# A running job whose worker has not written its heartbeat for this long is taken for dead:
# queued again while it has attempts left (PRB_JOB_ATTEMPTS), then marked failed.
PRB_JOB_LEASE_S = envint("PRB_JOB_LEASE_S", 60, minimum=1)
# How many workers may take a job: one whose worker died is queued again until they are spent,
# then marked failed with the reason.
PRB_JOB_ATTEMPTS = envint("PRB_JOB_ATTEMPTS", 2, minimum=1)
# A campaign with more pairs than this has its audit page's audit computed by a worker (a job
# started from the page or the API); a smaller one's is computed in the request.
PRB_BACKGROUND_AUDIT_PAIRS = envint("PRB_BACKGROUND_AUDIT_PAIRS", 20_000)
# An answer or dataset file larger than this (bytes) uploaded on the pages or to the API is
# imported by a worker (202 with the job's URL); a smaller one in the request.
PRB_BACKGROUND_IMPORT_BYTES = envint("PRB_BACKGROUND_IMPORT_BYTES", 8 * 1024 * 1024)

# Prolific's API: with a token, the Prolific page approves, rejects and pays bonuses there and
# reads back who returned or timed out; without one it offers the CSVs alone.
PROLIFIC_API_TOKEN = os.environ.get("PROLIFIC_API_TOKEN", "").strip()
PROLIFIC_API_URL = os.environ.get("PROLIFIC_API_URL", "https://api.prolific.com/api/v1/")
