"""Settings for prb-annotate, read from the environment.

SQLite is the embedded default (a file in ``var/``); ``DATABASE_URL`` selects PostgreSQL for
real campaigns. Everything a deployment changes is an environment variable.
"""

import os
import re
import tempfile
import warnings
from pathlib import Path
from typing import Any

import dj_database_url
import django_stubs_ext
from django.core.exceptions import ImproperlyConfigured

# Lets the admin and generic views be subscripted with their model type at run time.
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent


def envbool(name: str, default: str) -> bool:
    return os.environ.get(name, default).strip().lower() in {"1", "true", "yes", "on"}


def envint(name: str, default: str) -> int:
    return int(os.environ.get(name, default))


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


DEBUG = envbool("DEBUG", "false")
# The fallback key only serves the demo and the tests; production must set SECRET_KEY.
SECRET_KEY = os.environ.get("SECRET_KEY", "insecure-demo-key-set-SECRET_KEY-in-production")
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
    "prb_annotate",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "prb_annotate.headers.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
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
SQLITE_BUSY_TIMEOUT_S = float(os.environ.get("PRB_SQLITE_BUSY_TIMEOUT_S", "30"))


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
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
# Login throttling (prb_annotate/logins.py): failures per username and per client address
# within the window lock further logins until they age out or a manager unlocks them.
LOGIN_FAILURES_PER_USERNAME = envint("LOGIN_FAILURES_PER_USERNAME", "5")
LOGIN_FAILURES_PER_ADDRESS = envint("LOGIN_FAILURES_PER_ADDRESS", "20")
LOGIN_LOCKOUT_MINUTES = envint("LOGIN_LOCKOUT_MINUTES", "15")
# Behind a reverse proxy: the request header holding the client's address (HTTP_X_REAL_IP).
LOGIN_CLIENT_ADDRESS_HEADER = os.environ.get("LOGIN_CLIENT_ADDRESS_HEADER", "")

# One-time "set your password" links for accounts a manager makes (campaigns/accounts.py):
# Django's password-reset tokens, valid this long at most.
PASSWORD_RESET_TIMEOUT = envint("SET_PASSWORD_LINK_DAYS", "7") * 24 * 3600
# Email is sent only when a server is configured; otherwise links are shown to the manager.
EMAIL_HOST = os.environ.get("EMAIL_HOST", "")
EMAIL_PORT = envint("EMAIL_PORT", "587")
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = envbool("EMAIL_USE_TLS", "true")
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "prb-annotate@localhost")
PRB_SEND_EMAIL = bool(EMAIL_HOST)

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
DATA_UPLOAD_MAX_MEMORY_SIZE = envint("PRB_UPLOAD_MAX_BYTES", str(50 * 1024 * 1024))

# HTTPS (see README, "Production"): all off by default so that the demo runs on plain HTTP.
SESSION_COOKIE_SECURE = envbool("SESSION_COOKIE_SECURE", "false")
CSRF_COOKIE_SECURE = envbool("CSRF_COOKIE_SECURE", "false")
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", "false")
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", "0")
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SECURE_HSTS_INCLUDE_SUBDOMAINS", "false")
SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", "false")
# Behind a TLS-terminating proxy: "HTTP_X_FORWARDED_PROTO,https" (header, value that means
# HTTPS). Set it only when the proxy always sets or overwrites that header.
SECURE_PROXY_SSL_HEADER = envpair("SECURE_PROXY_SSL_HEADER")
# Only the app's own scripts and styles (prb_annotate/headers.py); no inline code, no other host.
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
        "rest_framework.renderers.JSONRenderer",
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
}

# Import limits: a text field longer than this is reported as an error, not stored.
PRB_MAX_TEXT_CHARS = envint("PRB_MAX_TEXT_CHARS", "100000")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
}

# Serve app static files straight from the app folders too, so the demo needs no collectstatic;
# production still runs collectstatic and serves the compressed copies.
WHITENOISE_USE_FINDERS = True
# Before any collectstatic, STATIC_ROOT does not exist, and the finders serve everything: that
# is the demo's normal state, not something to warn about on every start.
warnings.filterwarnings(
    "ignore", message=f"No directory at: {re.escape(str(STATIC_ROOT))}", category=UserWarning
)
