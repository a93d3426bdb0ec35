"""Settings, read from the environment once, here.

The embedded default (no variable set) is SQLite in ``var/`` and Celery's filesystem transport in
``var/broker/``: it runs with Python alone. ``DATABASE_URL`` and ``CELERY_BROKER_URL`` switch to
PostgreSQL and Redis without a code change.
"""

from __future__ import annotations

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

VAR_DIR = Path(env.str("VAR_DIR", default=str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

DEBUG = env.bool("DEBUG", default=False)
# The default key is for the embedded development setup only; production sets SECRET_KEY.
SECRET_KEY = env.str("SECRET_KEY", default="dev-only-insecure-secret-key-change-me-in-production")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    "accounts",
    "orders",
    "campaigns",
    "imports",
    "integrations",
    "exports",
    "ledger",
    "giftcards",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
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

# --- Database -----------------------------------------------------------------------------------
DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}")}
# Replaces only the database name: a process the test suite starts (the real Celery worker) is pointed at
# the test database this way.
if env.str("DATABASE_NAME", default=""):
    DATABASES["default"]["NAME"] = env.str("DATABASE_NAME")
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL and IMMEDIATE transactions let the web process, the worker and beat share one file
    # without "database is locked" errors under normal load.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "timeout": 30,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
    # A file, not memory, so that a Celery worker process started by the tests sees the test data.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test-db.sqlite3")}
else:
    DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("DATABASE_CONN_MAX_AGE", default=60))
    DATABASES["default"].setdefault("CONN_HEALTH_CHECKS", True)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = env.str("STATIC_ROOT", default=str(BASE_DIR / "staticfiles"))
Path(STATIC_ROOT).mkdir(parents=True, exist_ok=True)  # whitenoise warns about a missing directory

# --- Celery --------------------------------------------------------------------------------------
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="filesystem://")
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {}
if CELERY_BROKER_URL.startswith("filesystem://"):
    _broker_dir = VAR_DIR / env.str("CELERY_FILESYSTEM_BROKER_DIR", default="broker")
    for _sub in ("queue", "processed", "control"):
        (_broker_dir / _sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
        # Seconds between looks at the queue folder; the end-to-end tests' worker looks more often.
        "polling_interval": env.float("CELERY_FILESYSTEM_POLLING_INTERVAL", default=1.0),
    }
elif CELERY_BROKER_URL.startswith("redis"):
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
# A test run or a benchmark uses a queue of its own, so that no other worker on the same broker takes its tasks.
CELERY_TASK_DEFAULT_QUEUE = env.str("CELERY_TASK_DEFAULT_QUEUE", default="celery")
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULE = {
    "imports-sweep-pending": {
        "task": "imports.tasks.sweep_pending_imports",
        "schedule": env.float("IMPORT_SWEEP_INTERVAL_SECONDS", default=30.0),
    },
    "exports-sweep": {
        "task": "exports.tasks.sweep_exports",
        "schedule": env.float("EXPORT_SWEEP_INTERVAL_SECONDS", default=5.0),
    },
    "exports-cron": {
        "task": "exports.tasks.run_cron_exports",
        "schedule": env.float("EXPORT_CRON_INTERVAL_SECONDS", default=60.0),
    },
}

# --- Imports -------------------------------------------------------------------------------------
# The spec states no maximum (Limits); these are the service's decisions, documented in the README.
IMPORT_MAX_BODY_BYTES = env.int("IMPORT_MAX_BODY_BYTES", default=10 * 1024 * 1024)
IMPORT_MAX_ITEMS = env.int("IMPORT_MAX_ITEMS", default=10_000)
# Items still pending this long after they were queued are handed to Celery again by the sweeper.
IMPORT_SWEEP_GRACE_SECONDS = env.int("IMPORT_SWEEP_GRACE_SECONDS", default=60)
DATA_UPLOAD_MAX_MEMORY_SIZE = IMPORT_MAX_BODY_BYTES

# --- manage.py runall ------------------------------------------------------------------------------
RUN_BIND = env.str("RUN_BIND", default="127.0.0.1:8000")
WEB_CONCURRENCY = env.int("WEB_CONCURRENCY", default=2)
WORKER_CONCURRENCY = env.int("WORKER_CONCURRENCY", default=2)
# /bench/bare, the baseline of bench/imports.py; only the benchmark's own server turns it on.
BENCH_BARE_ENDPOINT = env.bool("BENCH_BARE_ENDPOINT", default=False)

# --- Exports -------------------------------------------------------------------------------------
# Spec retry rule: a real-time web hook is tried up to 5 times; the delay doubles from this many seconds.
EXPORT_RETRY_BASE_DELAY = env.float("EXPORT_RETRY_BASE_DELAY", default=10.0)
# A first attempt still pending this long after it was queued is handed to Celery again by the sweeper.
EXPORT_SWEEP_GRACE_SECONDS = env.int("EXPORT_SWEEP_GRACE_SECONDS", default=30)
# How long a worker may work on one delivery before another may take it up (the first one died).
EXPORT_LEASE_SECONDS = env.int("EXPORT_LEASE_SECONDS", default=600)

# --- Outgoing HTTP (runtime integrations and web hook exports) -------------------------------------
OUTBOUND_ALLOWED_NETWORKS = env.list("OUTBOUND_ALLOWED_NETWORKS", default=[])

# --- REST framework and OpenAPI --------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["accounts.authentication.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["accounts.authentication.HasAdminScope"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_PAGINATION_CLASS": "accounts.api_common.Pagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "accounts.api_common.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Retail back-office integration API",
    "DESCRIPTION": (
        "Import endpoints (`/imports/...`) and the back-office REST API (`/api/v1/...`). "
        "Authenticate with the query parameters `account`, `integration` and `apikey`, or with "
        "`Authorization: Bearer <apikey>` plus `account` and `integration` in the query."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SERVE_AUTHENTICATION": [],
    "APPEND_COMPONENTS": {
        "securitySchemes": {
            "apikey": {"type": "apiKey", "in": "query", "name": "apikey"},
            "bearer": {"type": "http", "scheme": "bearer"},
        }
    },
    "SECURITY": [{"apikey": []}, {"bearer": []}],
    "PREPROCESSING_HOOKS": ["imports.docs.hide_trailing_slash_twins"],
    # Two models have a "kind": name their enums apart instead of letting a hash decide.
    "ENUM_NAME_OVERRIDES": {
        "StockLocationKindEnum": "accounts.models.StockLocation.Kind",
        "SaleKindEnum": "ledger.models.SaleKind",
        "RuntimeIntegrationKindEnum": "integrations.models.KIND_CHOICES",
    },
    # Swagger UI served from this service (no CDN), so /api/docs/ works offline and behind firewalls.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- Logging -------------------------------------------------------------------------------------
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}

# Publishing a task must not hold an import request for long when the broker is down: the items are
# already committed, and the sweeper hands them over later.
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5}
