"""Web hook: POST the rendered data to an https URL, signed the Standard Webhooks way.

Config: ``{"type": "webhook", "url": "https://...", "headers": {name: value}, "secret": "whsec_...",
"auth": null | {"type": "basic", "username", "password"} | {"type": "bearer", "token"},
"connect_timeout": 5, "read_timeout": 15, "secret_fields": ["url.path"]}``. A token in the URL is kept as given.

Every request carries ``webhook-id`` (the delivery id: a receiver drops repeats), ``webhook-timestamp``
and ``webhook-signature`` (``v1,`` + base64 HMAC-SHA256 over ``id.timestamp.body`` with the secret's
bytes). 2xx is success. Retryable, per the spec's rule: 503, 522, 524, a timeout, a refused connection.
Redirects are not followed. Plain http only to an address inside ``OUTBOUND_ALLOWED_NETWORKS`` (judged by the
guarded connection on the address it connects to). Sent through the one outbound client (``core.outbound``):
its guard, its error mapping (``classify``) and its timeout policy (``timeouts``), within the call lifecycle's
deadline (``core.calls.exchange``; ``exports.circuit`` asks the breaker before).

Secrets (``core.secrets``): the signing ``secret``, every ``auth`` value, every header value (but the
few public headers: Accept, Content-Type, ...), the URL's userinfo and query values, and its path unless
``secret_fields`` is given without ``"url.path"`` (a hook URL is often a capability: the path is secret by
default, ``"secret_fields": []`` shows it). They read as ``MASK``; ``MASK`` sent back keeps the stored value
while the URL's scheme, host and port stay the same (the signing secret, which never leaves the service, is
kept in any case); a ``MASK`` that keeps nothing (a new header name or auth value, a new query parameter, a
signing secret where none is stored) is refused naming the field. They are redacted from error messages (a
receiver may echo what it got) and logs.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from dataclasses import replace
from functools import cache
from typing import Any
from urllib.parse import unquote, urlsplit

import requests
from django.conf import settings

from core import calls, destinations, outbound
from core.secrets import (
    MASK,
    URL_PATH,
    hidden,
    is_secret_header,
    mask_headers,
    mask_url,
    redact,
    same_origin,
    searchable,
    unmask_headers,
    unmask_url,
    url_secrets,
)
from exports.deliveries.base import (
    ANSWER_BYTES,
    MASKED,
    ConfigError,
    Delivery,
    DeliveryResult,
    Send,
    short_answer,
    short_sent,
)
from exports.transforms.base import TransformError

RETRYABLE_STATUS = frozenset({503, 522, 524})
# What a test delivery shows of a receiver's successful answer, and an attempt's error of a refusal.
ANSWER_CHARS = 500
ERROR_CHARS = 500
# What is read of a receiver's answer at most (the rest is not waited for): more than is kept (``ANSWER_CHARS``,
# ``base.ANSWER_BYTES``), so that a secret the receiver echoes across the cut is redacted whole before it.
ANSWER_READ_BYTES = 64 * 1024
SECRET_PREFIX = "whsec_"  # noqa: S105 - the format prefix, not a secret
MAX_TIMEOUT = 60.0
DEFAULT_CONNECT_TIMEOUT = 5.0
DEFAULT_READ_TIMEOUT = 15.0
RESERVED_HEADERS = frozenset(
    {"webhook-id", "webhook-timestamp", "webhook-signature", "content-type", "content-length", "host"}
)


def secret_bytes(secret: str) -> bytes:
    if not secret.startswith(SECRET_PREFIX):
        raise ConfigError("secret", "must start with whsec_")
    try:
        raw = base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)
    except (binascii.Error, ValueError):
        raise ConfigError("secret", "must be whsec_ followed by base64") from None
    if len(raw) < 24:
        raise ConfigError("secret", "must hold at least 24 bytes")
    return raw


def sign(secret: str, delivery_id: str, timestamp: int, body: bytes) -> str:
    message = f"{delivery_id}.{timestamp}.".encode() + body
    digest = hmac.new(secret_bytes(secret), message, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def _path_secret(config: dict[str, Any]) -> bool:
    declared = config.get("secret_fields")
    return URL_PATH in declared if isinstance(declared, list) else True


def _basic(username: Any, password: Any) -> str:
    """The credentials as an ``Authorization: Basic`` header carries them (what a receiver may echo back)."""
    pair = f"{username or ''}:{password or ''}"
    try:
        raw = pair.encode("latin1")  # as requests encodes them
    except UnicodeEncodeError:
        raw = pair.encode()
    return base64.b64encode(raw).decode()


def _auth_value(key: str, value: Any) -> bool:
    return key != "type" and isinstance(value, str) and bool(value)


class WebhookDelivery(Delivery):
    code = "webhook"
    SECRET_KEYS = ("secret",)

    def destination(self, config: dict[str, Any]) -> Any:
        return config.get("url")

    def mask(self, config: dict[str, Any]) -> dict[str, Any]:
        out = super().mask(config)
        if isinstance(config.get("url"), str):
            out["url"] = mask_url(config["url"], path_secret=_path_secret(config), placeholders=False)
        if isinstance(config.get("headers"), dict):
            out["headers"] = mask_headers(config["headers"])
        if isinstance(config.get("auth"), dict):
            out["auth"] = {k: MASK if _auth_value(k, v) else v for k, v in config["auth"].items()}
        return out

    def unmask(self, config: dict[str, Any], stored: dict[str, Any] | None) -> dict[str, Any]:
        kept = stored if isinstance(stored, dict) and stored.get("type") == self.code else {}
        # The signing secret never leaves the service: it is kept whatever the URL.
        out = super().unmask(config, {**kept, "url": config.get("url")} if kept else None)
        same = bool(kept) and same_origin(config.get("url"), kept.get("url"))
        if isinstance(config.get("headers"), dict):
            stored_headers = kept.get("headers") if isinstance(kept.get("headers"), dict) else None
            out["headers"] = unmask_headers(config["headers"], stored_headers, same_destination=same)
        auth = config.get("auth")
        if isinstance(auth, dict):
            stored_auth: dict[str, Any] = kept["auth"] if isinstance(kept.get("auth"), dict) else {}
            if stored_auth.get("type") != auth.get("type"):
                stored_auth = {}
            out["auth"] = {
                k: stored_auth[k] if v == MASK and same and stored_auth.get(k) else v for k, v in auth.items()
            }
        if isinstance(config.get("url"), str):
            out["url"] = unmask_url(
                config["url"],
                kept.get("url") if same else None,
                path_secret=_path_secret(config),
                placeholders=False,
            )
        return out

    def secrets(self, config: dict[str, Any]) -> list[str]:
        found: list[Any] = [config.get("secret")]
        headers = config.get("headers")
        if isinstance(headers, dict):
            found += [v for k, v in headers.items() if is_secret_header(str(k))]
        auth = config.get("auth")
        if isinstance(auth, dict):
            found += [v for k, v in auth.items() if _auth_value(k, v)]
            if auth.get("type") == "basic":
                found.append(_basic(auth.get("username"), auth.get("password")))
        if isinstance(config.get("url"), str):
            found += url_secrets(config["url"], path_secret=_path_secret(config), placeholders=False)
            try:
                parts = urlsplit(config["url"])
            except ValueError:
                parts = None  # not a URL: validate refuses it, and url_secrets took it whole
            if parts is not None and parts.username is not None:
                found.append(_basic(unquote(parts.username), unquote(parts.password or "")))
        return searchable(found)

    def validate(self, config: dict[str, Any]) -> None:
        _validate_url(config)
        _validate_headers(config.get("headers", {}))
        if config.get("secret") is not None:
            if config["secret"] == MASK:
                raise ConfigError("secret", f"{MASKED} Leave it out to have one generated.")
            secret_bytes(str(config["secret"]))
        _validate_auth(config.get("auth"))
        for name in ("connect_timeout", "read_timeout"):
            value = config.get(name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= MAX_TIMEOUT
            ):
                raise ConfigError(name, f"must be a number of seconds between 0 and {MAX_TIMEOUT:g}")

    def time_budget(self, config: dict[str, Any]) -> float:
        connect, read = _configured_timeouts(config)
        return connect + read

    def send(self, job: Send) -> DeliveryResult:
        secrets = self.secrets(job.config)
        with hidden(secrets):
            result = self._deliver(job, secrets=secrets)
        # A receiver may echo what it got (a token, the URL) in its answer, which becomes the attempt's error.
        return replace(result, error=redact(result.error, secrets), sent=redact(result.sent, secrets))

    def sent(self, config: dict[str, Any], *, size: int, content_type: str) -> str:
        """The request in short: ``POST`` and the URL as it reads (its secrets masked), the body's size and type,
        the configured headers (secret values masked) and how it was authenticated and signed."""
        url = mask_url(str(config.get("url", "")), path_secret=_path_secret(config), placeholders=False)
        text = f"POST {url}, {size:,} bytes {content_type}"
        headers = config.get("headers")
        if isinstance(headers, dict) and headers:
            # By name; they are sent in the configured order.
            shown = sorted(mask_headers(headers).items())
            text += "; headers " + ", ".join(f"{name}: {value}" for name, value in shown)
        auth = config.get("auth")
        if isinstance(auth, dict) and auth.get("type"):
            text += f"; {auth['type']} authorization {MASK}"
        if config.get("secret"):
            text += "; signed"
        return short_sent(text)

    def _deliver(self, job: Send, *, secrets: list[str]) -> DeliveryResult:
        rendered, config, delivery_id = job.rendered, job.config, job.delivery_id
        url = config["url"]
        try:
            body = rendered.body()
        except TransformError as exc:
            return DeliveryResult(ok=False, error=str(exc))
        sent = self.sent(config, size=len(body), content_type=rendered.content_type)
        timestamp = int(time.time())
        headers = {
            **config.get("headers", {}),
            "Content-Type": rendered.content_type,
            "webhook-id": delivery_id,
            "webhook-timestamp": str(timestamp),
        }
        if config.get("secret"):
            headers["webhook-signature"] = sign(config["secret"], delivery_id, timestamp, body)
        auth = config.get("auth")
        if auth and auth["type"] == "bearer":
            headers["Authorization"] = f"Bearer {auth['token']}"
        basic = (auth["username"], auth["password"]) if auth and auth["type"] == "basic" else None
        # The whole exchange (connecting, sending, the answer to its last byte) within connect + read timeouts and
        # within what the task has left: requests' timeouts apply to each socket operation only, so a receiver
        # that trickles its answer a byte at a time would never trip them (core.deadline cuts it off).
        connect, read = _configured_timeouts(config)
        limits = outbound.timeouts(connect=connect, read=read, left=job.timeout)

        def post(call: calls.Call) -> tuple[requests.Response, bytes] | DeliveryResult:
            response = _session().post(
                url,
                data=body,
                headers=headers,
                auth=basic,
                timeout=limits.per_operation,
                allow_redirects=False,
                stream=True,
            )
            call.answering = True
            # Only the answer's start is shown; a receiver cannot make a worker hold an endless answer.
            return response, outbound.read_answer(response, ANSWER_READ_BYTES, truncate=True)

        answered = calls.exchange(post, seconds=limits.total, failed=_failed)
        if isinstance(answered, DeliveryResult):
            return replace(answered, sent=sent)
        response, content = answered
        # Redacted before it is cut short, so that no part of a secret the receiver echoes is left.
        text = redact(content.decode(response.encoding or "utf-8", errors="replace"), secrets)
        answer = short_answer(text[:ANSWER_BYTES])  # a character is a byte at least
        if 200 <= response.status_code < 300:
            return DeliveryResult(ok=True, status_code=response.status_code, sent=sent, answer=answer)
        return DeliveryResult(
            ok=False,
            status_code=response.status_code,
            error=f"HTTP {response.status_code}: {text[:ERROR_CHARS]}",
            retryable=response.status_code in RETRYABLE_STATUS,
            unreachable=response.status_code >= 500,
            sent=sent,
            answer=answer,
        )


def _configured_timeouts(config: dict[str, Any]) -> tuple[float, float]:
    return (
        float(config.get("connect_timeout", DEFAULT_CONNECT_TIMEOUT)),
        float(config.get("read_timeout", DEFAULT_READ_TIMEOUT)),
    )


# The attempt's error for each kind of failure (``core.outbound.classify``); the rest is a "request error".
_ERRORS = {
    outbound.FailureKind.TIMEOUT: "timeout",
    outbound.FailureKind.CONNECTION_REFUSED: "connection refused",
    outbound.FailureKind.DROPPED: "connection error: {detail}",
    outbound.FailureKind.CONNECTION: "connection error: {detail}",
    outbound.FailureKind.TLS: "connection error: {detail}",
    outbound.FailureKind.CUT_OFF: "connection error: {detail}",
    outbound.FailureKind.REFUSED: "destination refused: {detail}",
}


def _failed(failure: outbound.Failure) -> DeliveryResult:
    """A request that got no answer."""
    error = _ERRORS.get(failure.kind, "request error: {detail}").format(detail=failure.detail)
    return DeliveryResult(
        ok=False,
        error=error,
        retryable=failure.retryable,
        unreachable=failure.unreachable,
        connecting=failure.connecting,
    )


@cache
def _session() -> requests.Session:
    """One guarded session per process: connections to a receiver are kept alive and reused, by the delivery
    task's send threads too (urllib3's pools are thread-safe, the session keeps no cookies); each destination's pool
    keeps as many connections as there are send threads."""
    return outbound.http_session(pool_size=max(outbound.DEFAULT_POOL_SIZE, int(settings.EXPORT_SEND_THREADS)))


def _validate_url(config: dict[str, Any]) -> None:
    """The URL, and the one secret place a web hook declares (its path)."""
    url = config.get("url")
    if not isinstance(url, str) or not url:
        raise ConfigError("url", "is required")
    declared = config.get("secret_fields")
    if declared is not None and (not isinstance(declared, list) or any(p != URL_PATH for p in declared)):
        raise ConfigError(
            "secret_fields", f'may only list "{URL_PATH}": every other secret of a web hook always is one'
        )
    if MASK in url:
        raise ConfigError("url", MASKED)
    try:
        parts = destinations.split_url(url)
    except destinations.BadUrl as exc:
        raise ConfigError("url", str(exc)) from None
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise ConfigError("url", "must be an absolute https URL")


def _validate_headers(headers: Any) -> None:
    if not isinstance(headers, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items()):
        raise ConfigError("headers", "must be an object of header name to string value")
    if bounded := destinations.header_problem(headers):
        raise ConfigError(*bounded)
    for name, value in headers.items():
        if name.lower() in RESERVED_HEADERS:
            raise ConfigError(f"headers.{name}", "is set by the service")
        if MASK in value:
            raise ConfigError(f"headers.{name}", MASKED)


def _validate_auth(auth: Any) -> None:
    if auth is None:
        return
    if not isinstance(auth, dict) or auth.get("type") not in ("basic", "bearer"):
        raise ConfigError("auth.type", "must be basic or bearer")
    needed = ("username", "password") if auth["type"] == "basic" else ("token",)
    for name in needed:
        if not isinstance(auth.get(name), str) or not auth[name]:
            raise ConfigError(f"auth.{name}", "is required")
        if MASK in auth[name]:
            raise ConfigError(f"auth.{name}", MASKED)
