"""Structured logs: the request id, the JSON formatter and the redaction of secrets (docs/operations.md, Observability).

Every log line carries the id of the request (or Celery task) it belongs to. ``LOG_FORMAT=json`` writes one JSON
object a line (for a log shipper); the default ``text`` is for a developer's terminal. Both redact: an API key
(``rk_...``), an ``apikey=`` (or token, secret, password) query value and an ``Authorization`` header value never
reach a log line, whoever logged them.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from accounts.keys import KEY_LEAD, PREFIX_LENGTH

REQUEST_ID_HEADER = "X-Request-ID"
# The Celery message header that carries the request id from the web process to the worker.
CELERY_HEADER = "request_id"
MAX_REQUEST_ID_LENGTH = 128
REDACTED = "[REDACTED]"

request_id_var: ContextVar[str | None] = ContextVar("request_id", default=None)
task_id_var: ContextVar[str | None] = ContextVar("task_id", default=None)

# A caller's id is kept only when it is short and made of characters that cannot forge a log line or a header.
_REQUEST_ID_RE = re.compile(rf"[A-Za-z0-9._:@/+=-]{{1,{MAX_REQUEST_ID_LENGTH}}}")

_SECRET_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    # accounts.keys: "rk_" + an 8 character prefix + a url-safe secret. The prefix is not secret (the admin
    # lists it) and tells an operator which key it was.
    (re.compile(rf"({re.escape(KEY_LEAD)}[0-9A-Za-z]{{{PREFIX_LENGTH}}})[A-Za-z0-9_-]{{8,}}"), rf"\1{REDACTED}"),
    # Query strings and form bodies: ?apikey=...&token=...
    (
        re.compile(r"(?i)\b((?:api_?key|access_token|token|secret|password|signature)=)[^&\s\"'#\\]+"),
        rf"\1{REDACTED}",
    ),
    # Header dumps: "Authorization: Bearer x", {'HTTP_AUTHORIZATION': 'Basic x'}, authorization=x
    (
        re.compile(r"(?i)(authorization['\"]?\s*[:=]\s*['\"]?)((?:bearer|basic|token|digest)\s+)?[^\s'\",}\\]+"),
        rf"\1\2{REDACTED}",
    ),
    # JSON-ish dumps: "apikey": "x", 'secret': 'x'
    (
        re.compile(r"(?i)([\"'](?:api_?key|token|secret|password)[\"']\s*:\s*[\"'])[^\"'\\]+"),
        rf"\1{REDACTED}",
    ),
]


def redact(text: str) -> str:
    """``text`` with every secret it contains replaced by ``[REDACTED]``."""
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def clean_request_id(value: object) -> str | None:
    """A caller's request id if it is acceptable (1-128 safe characters), else None (a new one is made)."""
    if not isinstance(value, str) or not _REQUEST_ID_RE.fullmatch(value):
        return None
    return value


def new_request_id() -> str:
    return uuid.uuid4().hex


class RequestIdFilter(logging.Filter):
    """Adds ``request_id`` and ``task_id`` to every record (``-`` outside a request or task)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id_var.get() or "-"
        record.task_id = task_id_var.get() or "-"
        return True


class RedactSecretsFilter(logging.Filter):
    """Rewrites a record's message with its secrets redacted; attached to the handlers so that every logger's
    records pass through it (third-party loggers included)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken %-format must not lose the line; the formatter reports it as usual
            return True
        redacted = redact(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


class TextFormatter(logging.Formatter):
    """The development format, with the request id; redacts the whole line (tracebacks included)."""

    def __init__(self, fmt: str | None = None, datefmt: str | None = None, style: Any = "%", **kwargs: Any) -> None:
        super().__init__(fmt or "%(asctime)s %(levelname)s [%(request_id)s] %(name)s %(message)s", datefmt, style)

    def format(self, record: logging.LogRecord) -> str:
        if not hasattr(record, "request_id"):
            RequestIdFilter().filter(record)
        return redact(super().format(record))


# Attributes every LogRecord has; anything else on a record came from ``extra=`` and is worth keeping.
_RESERVED = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime", "request_id", "task_id"}


class JsonFormatter(logging.Formatter):
    """One JSON object a line: ``time, level, logger, message, request_id`` (+ ``task_id``, ``exc_info`` and any
    ``extra=`` fields). Every string is redacted."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, tz=UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": redact(record.getMessage()),
            "request_id": getattr(record, "request_id", None) or request_id_var.get(),
        }
        task_id = getattr(record, "task_id", None) or task_id_var.get()
        if task_id and task_id != "-":
            entry["task_id"] = task_id
        if record.exc_info:
            entry["exc_info"] = redact(self.formatException(record.exc_info))
        elif record.exc_text:
            entry["exc_info"] = redact(record.exc_text)
        if record.stack_info:
            entry["stack_info"] = redact(self.formatStack(record.stack_info))
        request = getattr(record, "request", None)
        if request is not None and hasattr(request, "path"):
            # Django's request loggers pass the request object: its method and path, never the query string.
            entry["http"] = {"method": getattr(request, "method", None), "path": request.path}
        for key, value in vars(record).items():
            if key not in _RESERVED and key != "request" and not key.startswith("_"):
                entry[key] = redact(value) if isinstance(value, str) else value
        # Redacted again as a whole: ``extra=`` dicts (Celery's task ``data``) may hold a secret too. The patterns
        # stop at quotes and backslashes, so the line stays valid JSON.
        return redact(json.dumps(entry, default=str, ensure_ascii=False))


# --- Celery: the request id travels in a message header -------------------------------------------------------
_task_tokens: dict[str, tuple[Any, Any]] = {}


def on_before_task_publish(headers: dict[str, Any] | None = None, **kwargs: Any) -> None:
    """Adds the current request id to the message of a task published during a request."""
    request_id = request_id_var.get()
    if request_id and headers is not None:
        headers.setdefault(CELERY_HEADER, request_id)


def on_task_prerun(task_id: str | None = None, task: Any = None, **kwargs: Any) -> None:
    """Restores the publishing request's id in the worker's log context for the task's run."""
    header = clean_request_id(getattr(getattr(task, "request", None), CELERY_HEADER, None))
    # An eager task (run in the publishing process) keeps the id of the request it runs in.
    request_token = request_id_var.set(header or request_id_var.get())
    task_token = task_id_var.set(task_id)
    if task_id:
        _task_tokens[task_id] = (request_token, task_token)


def on_task_postrun(task_id: str | None = None, **kwargs: Any) -> None:
    tokens = _task_tokens.pop(task_id, None) if task_id else None
    if tokens is None:
        return
    try:
        request_id_var.reset(tokens[0])
        task_id_var.reset(tokens[1])
    except ValueError:  # set in another context (a different thread of a pool): nothing of ours to undo here
        request_id_var.set(None)
        task_id_var.set(None)


def connect_celery_signals() -> None:
    from celery.signals import before_task_publish, task_postrun, task_prerun

    before_task_publish.connect(on_before_task_publish, weak=False, dispatch_uid="ops.request_id.publish")
    task_prerun.connect(on_task_prerun, weak=False, dispatch_uid="ops.request_id.prerun")
    task_postrun.connect(on_task_postrun, weak=False, dispatch_uid="ops.request_id.postrun")
