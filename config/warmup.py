"""Warming a web process before it serves, so that no request pays for the start (docs/notes/pos.md).

A fresh process has imported the applications (``django.setup()``, pybars3's grammar included, which compiles
at import) but not what Django loads on first use: the URL configuration, which imports every view module with
DRF and drf-spectacular (about 0.4-0.7 s on the reference machine), the URL resolver's reverse maps, DRF's
settings given as dotted paths, the template engines. ``warm()`` loads them and sends one request through the
WSGI application itself (``GET /health/live``: no database, no broker, no API key), then closes any database
connection, so that a process forked afterwards opens its own.

gunicorn calls it from ``config/gunicorn.conf.py``: in the master, once, when the application is preloaded
(``preload_app``, the default), so that every worker forked from it (at start, after ``max_requests``, after a
crash) starts warm and at once; otherwise in each worker before it accepts a request.

Nothing here may start a thread or leave a connection open: a forked worker would share it with its siblings.
"""

from __future__ import annotations

import io
import sys
import time
from collections.abc import Callable
from typing import Any

__all__ = ("warm",)


def _host() -> str:
    """A host name the application answers to (``ALLOWED_HOSTS``), so the warm-up request is not refused."""
    from django.conf import settings

    for allowed in settings.ALLOWED_HOSTS:
        host = str(allowed).lstrip(".")
        if host and "*" not in host:
            return host
    return "localhost"


def _request(path: str) -> int:
    """``GET path`` through the project's WSGI application; returns the status code."""
    from config.wsgi import application  # lazy on purpose, not a cycle: loading the application is the warm-up

    environ: dict[str, Any] = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": _host(),
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": _host(),
        "REMOTE_ADDR": "127.0.0.1",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(b""),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": False,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    statuses: list[str] = []

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[[bytes], None]:
        statuses.append(status)
        return lambda data: None

    response = application(environ, start_response)
    try:
        b"".join(response)
    finally:
        close = getattr(response, "close", None)
        if close is not None:
            close()
    return int(statuses[0].split()[0])


def _urls() -> None:
    from django.urls import get_resolver, reverse

    get_resolver().url_patterns  # noqa: B018 - the access imports every view module
    reverse("health-live")  # builds the resolver's reverse maps


def _api_settings() -> None:
    from rest_framework.settings import DEFAULTS, api_settings

    for name in DEFAULTS:
        getattr(api_settings, name)  # imports the classes named by dotted path, once per process


def _templates() -> None:
    from django.template import engines

    engines.all()  # builds each configured engine with its loaders and template libraries


def warm() -> dict[str, float]:
    """Load what Django loads lazily and serve one internal request; returns the milliseconds of each step."""
    from django.db import connections

    steps: dict[str, Callable[[], Any]] = {
        "urls": _urls,
        "api settings": _api_settings,
        "templates": _templates,
        "request": lambda: _request("/health/live"),
    }
    spent: dict[str, float] = {}
    try:
        for name, step in steps.items():
            started = time.perf_counter()
            step()
            spent[name] = round((time.perf_counter() - started) * 1000, 1)
    finally:
        connections.close_all()
        # A pool (DATABASE_POOL) keeps its connections and threads after close_all: a forked worker would inherit
        # them half-alive. The workers open their own.
        for connection in connections.all(initialized_only=True):
            close_pool = getattr(connection, "close_pool", None)  # PostgreSQL's wrapper only
            if close_pool is not None and getattr(connection, "pool", None):
                close_pool()
    return spent
