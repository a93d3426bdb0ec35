"""Structured logs: the request id (header in, header out, every log line, Celery tasks) and redaction."""

from __future__ import annotations

import json
import logging
import sys

import pytest
from celery import shared_task
from celery.signals import before_task_publish, task_postrun, task_prerun
from django.conf import settings
from django.test import Client

from accounts.keys import generate_key
from ops.logging import (
    REDACTED,
    JsonFormatter,
    RedactSecretsFilter,
    RequestIdFilter,
    TextFormatter,
    redact,
    request_id_var,
    task_id_var,
)

pytestmark = pytest.mark.django_db

logger = logging.getLogger("tests.ops")


@pytest.fixture
def web() -> Client:
    return Client()


@pytest.fixture
def redacting_caplog(caplog):
    """caplog with the filters the console handler has (settings.LOGGING): what reaches a log line."""
    caplog.handler.addFilter(RequestIdFilter())
    caplog.handler.addFilter(RedactSecretsFilter())
    caplog.set_level(logging.INFO)
    yield caplog
    caplog.handler.filters.clear()


def record(message: str, *args: object, exc_info: object = None, **extra: object) -> logging.LogRecord:
    rec = logging.LogRecord("tests.ops", logging.INFO, __file__, 1, message, args, exc_info)  # type: ignore[arg-type]
    for key, value in extra.items():
        setattr(rec, key, value)
    return rec


# --- Request id -------------------------------------------------------------------------------------------------
def test_a_request_without_an_id_gets_a_new_one_in_the_response(web) -> None:
    response = web.get("/health/live")
    assert len(response["X-Request-ID"]) == 32


def test_each_request_gets_its_own_id(web) -> None:
    assert web.get("/health/live")["X-Request-ID"] != web.get("/health/live")["X-Request-ID"]


def test_the_callers_request_id_is_kept(web) -> None:
    response = web.get("/health/live", HTTP_X_REQUEST_ID="lb-1234.abc")
    assert response["X-Request-ID"] == "lb-1234.abc"


@pytest.mark.parametrize(
    "bad",
    ["x" * 129, "has space", "new\nline", 'quote"', "ünïcode", ""],
    ids=["too-long", "space", "newline", "quote", "unicode", "empty"],
)
def test_an_unacceptable_request_id_is_replaced(web, bad) -> None:
    response = web.get("/health/live", HTTP_X_REQUEST_ID=bad)
    assert response["X-Request-ID"] != bad
    assert len(response["X-Request-ID"]) == 32


def test_error_answers_carry_the_request_id_too(web) -> None:
    response = web.get("/api/v1/no-such-endpoint", HTTP_X_REQUEST_ID="req-404")
    assert response.status_code == 404
    assert response["X-Request-ID"] == "req-404"


def test_every_log_line_of_a_request_carries_its_id(web, redacting_caplog, tenant) -> None:
    # An unknown key makes the authentication log a warning (or at least Django logs the 401/403).
    web.get(f"/api/v1/sales?{tenant.query('rk_00000000notavalidkeynotavalidkey')}", HTTP_X_REQUEST_ID="req-42")
    lines = [r for r in redacting_caplog.records if r.name.startswith("django")]
    assert lines, "the refused request should have been logged"
    assert {r.request_id for r in lines} == {"req-42"}


def test_outside_a_request_the_request_id_is_a_dash(redacting_caplog) -> None:
    logger.info("idle")
    assert redacting_caplog.records[-1].request_id == "-"


def test_the_request_id_is_cleared_after_the_request(web) -> None:
    web.get("/health/live", HTTP_X_REQUEST_ID="req-gone")
    assert request_id_var.get() is None


# --- Celery ----------------------------------------------------------------------------------------------------
@shared_task(name="tests.ops.echo_request_id")
def echo_request_id() -> str | None:
    return request_id_var.get()


def test_a_task_published_during_a_request_carries_its_id_in_a_header() -> None:
    token = request_id_var.set("req-celery")
    try:
        headers: dict[str, object] = {}
        before_task_publish.send(sender="tests.ops.echo_request_id", body=(), headers=headers)
    finally:
        request_id_var.reset(token)
    assert headers["request_id"] == "req-celery"


def test_a_task_published_outside_a_request_gets_no_header() -> None:
    headers: dict[str, object] = {}
    before_task_publish.send(sender="tests.ops.echo_request_id", body=(), headers=headers)
    assert "request_id" not in headers


def test_the_worker_restores_the_request_id_for_the_task_run_and_clears_it_after() -> None:
    echo_request_id.push_request(request_id="req-celery", id="task-1")
    try:
        task_prerun.send(sender=echo_request_id, task_id="task-1", task=echo_request_id, args=(), kwargs={})
        seen = (request_id_var.get(), task_id_var.get())
        task_postrun.send(sender=echo_request_id, task_id="task-1", task=echo_request_id, args=(), kwargs={})
    finally:
        echo_request_id.pop_request()
    assert seen == ("req-celery", "task-1")
    assert (request_id_var.get(), task_id_var.get()) == (None, None)


def test_a_forged_request_id_header_on_a_task_is_ignored() -> None:
    echo_request_id.push_request(request_id="bad\nid", id="task-2")
    try:
        task_prerun.send(sender=echo_request_id, task_id="task-2", task=echo_request_id, args=(), kwargs={})
        seen = request_id_var.get()
        task_postrun.send(sender=echo_request_id, task_id="task-2", task=echo_request_id, args=(), kwargs={})
    finally:
        echo_request_id.pop_request()
    assert seen is None


def test_an_eager_task_keeps_the_id_of_the_request_it_runs_in() -> None:
    token = request_id_var.set("req-eager")
    try:
        assert echo_request_id.apply().get() == "req-eager"
        assert request_id_var.get() == "req-eager"
    finally:
        request_id_var.reset(token)


# --- Redaction -------------------------------------------------------------------------------------------------
def test_an_api_key_is_redacted_but_its_prefix_kept(redacting_caplog) -> None:
    raw, prefix, _ = generate_key()
    logger.info("key presented: %s", raw)
    text = redacting_caplog.text
    assert raw not in text
    assert f"rk_{prefix}{REDACTED}" in text


def test_an_apikey_query_value_is_redacted(redacting_caplog) -> None:
    logger.info("GET /imports/orders?account=acme&apikey=letmein123&integration=web")
    assert "letmein123" not in redacting_caplog.text
    assert f"apikey={REDACTED}&integration=web" in redacting_caplog.text


@pytest.mark.parametrize(
    "line",
    [
        "Authorization: Bearer abc.def.ghi",
        "{'HTTP_AUTHORIZATION': 'Bearer abc.def.ghi'}",
        '{"Authorization": "Basic abc.def.ghi"}',
        "authorization=abc.def.ghi",
    ],
)
def test_an_authorization_header_value_is_redacted(redacting_caplog, line) -> None:
    logger.warning(line)
    assert "abc.def.ghi" not in redacting_caplog.text
    assert REDACTED in redacting_caplog.text


def test_a_secret_in_a_json_dump_is_redacted() -> None:
    assert redact('{"url": "https://x", "secret": "whsec_abc"}') == '{"url": "https://x", "secret": "[REDACTED]"}'


def test_ordinary_text_is_left_alone() -> None:
    text = "order 123 for shop-1 (tokens in basket: 3), apikey missing"
    assert redact(text) == text


def test_a_secret_in_an_exception_traceback_is_redacted() -> None:
    raw, _, _ = generate_key()
    try:
        raise ValueError(f"bad key {raw}")
    except ValueError:
        rec = record("failed", exc_info=sys.exc_info())
    assert raw not in TextFormatter().format(rec)
    assert raw not in JsonFormatter().format(rec)


# --- Formats ---------------------------------------------------------------------------------------------------
def test_the_json_format_writes_one_object_a_line_with_the_request_id() -> None:
    rec = record("sold %s items", 3, request_id="req-7", shop="shop-1")
    line = JsonFormatter().format(rec)
    assert "\n" not in line
    entry = json.loads(line)
    assert entry["message"] == "sold 3 items"
    assert entry["request_id"] == "req-7"
    assert entry["level"] == "INFO"
    assert entry["logger"] == "tests.ops"
    assert entry["shop"] == "shop-1"  # extra= fields are kept
    assert entry["time"].endswith("+00:00")


def test_the_json_format_keeps_unicode_readable() -> None:
    assert json.loads(JsonFormatter().format(record("København ✓")))["message"] == "København ✓"


def test_the_text_format_shows_the_request_id() -> None:
    assert "[req-9]" in TextFormatter().format(record("hello", request_id="req-9"))


def test_the_console_handler_redacts_and_adds_the_request_id() -> None:
    handler = settings.LOGGING["handlers"]["console"]
    assert handler["filters"] == ["request_id", "redact_secrets"]


def test_log_format_json_selects_the_json_formatter(monkeypatch) -> None:
    import importlib

    import config.settings as module

    monkeypatch.setenv("LOG_FORMAT", "json")
    try:
        reloaded = importlib.reload(module)
        assert reloaded.LOGGING["handlers"]["console"]["formatter"] == "json"
    finally:
        monkeypatch.delenv("LOG_FORMAT")
        importlib.reload(module)


def test_a_secret_inside_an_extra_dict_is_redacted_and_the_line_stays_json() -> None:
    raw, _, _ = generate_key()
    rec = record("task received", data={"args": f"('{raw}',)", "headers": {"Authorization": 'Bearer ab"c'}})
    line = JsonFormatter().format(rec)
    entry = json.loads(line)
    assert raw not in line
    assert "ab" not in entry["data"]["headers"]["Authorization"].replace("[REDACTED]", "")


def test_a_refused_request_logged_as_json_shows_its_path_but_never_its_key(web, redacting_caplog, tenant) -> None:
    web.get(f"/api/v1/sales?{tenant.query('rk_00000000notavalidkeynotavalidkey')}")
    entries = [json.loads(JsonFormatter().format(r)) for r in redacting_caplog.records if r.name == "django.request"]
    assert entries
    assert entries[0]["http"] == {"method": "GET", "path": "/api/v1/sales"}
    assert "notavalidkey" not in json.dumps(entries)
