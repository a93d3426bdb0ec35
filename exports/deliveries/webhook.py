"""Web hook: POST the rendered data to an https URL, signed the Standard Webhooks way.

Config: ``{"type": "webhook", "url": "https://...", "headers": {name: value}, "secret": "whsec_...",
"auth": null | {"type": "basic", "username", "password"} | {"type": "bearer", "token"},
"connect_timeout": 5, "read_timeout": 15}``. A token in the URL is kept as given.

Every request carries ``webhook-id`` (the delivery id: a receiver drops repeats), ``webhook-timestamp``
and ``webhook-signature`` (``v1,`` + base64 HMAC-SHA256 over ``id.timestamp.body`` with the secret's
bytes). 2xx is success. Retryable, per the spec's rule: 503, 522, 524, a timeout, a refused connection.
Redirects are not followed. Plain http only to an address inside ``OUTBOUND_ALLOWED_NETWORKS``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from functools import cache
from typing import Any
from urllib.parse import urlsplit

import requests

from exports.deliveries.base import ConfigError, Delivery, DeliveryResult, RenderContext, Rendered
from exports.transforms.base import TransformError
from integrations import outbound

RETRYABLE_STATUS = frozenset({503, 522, 524})
SECRET_PREFIX = "whsec_"  # noqa: S105 - the format prefix, not a secret
MAX_TIMEOUT = 60.0
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


def _refused(exc: BaseException) -> bool:
    """Whether a ConnectionRefusedError lies anywhere in the chain requests and urllib3 wrap it in."""
    stack: list[object] = [exc]
    seen: set[int] = set()
    while stack:
        error = stack.pop()
        if not isinstance(error, BaseException) or id(error) in seen:
            continue
        seen.add(id(error))
        if isinstance(error, ConnectionRefusedError):
            return True
        stack.extend([error.__cause__, error.__context__, getattr(error, "reason", None), *error.args])
    return False


class WebhookDelivery(Delivery):
    code = "webhook"

    def validate(self, config: dict[str, Any]) -> None:
        url = config.get("url")
        if not isinstance(url, str) or not url:
            raise ConfigError("url", "is required")
        parts = urlsplit(url)
        if parts.scheme not in ("https", "http") or not parts.hostname:
            raise ConfigError("url", "must be an absolute https URL")
        headers = config.get("headers", {})
        if not isinstance(headers, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
        ):
            raise ConfigError("headers", "must be an object of header name to string value")
        for name in headers:
            if name.lower() in RESERVED_HEADERS:
                raise ConfigError(f"headers.{name}", "is set by the service")
        if config.get("secret") is not None:
            secret_bytes(str(config["secret"]))
        auth = config.get("auth")
        if auth is not None:
            if not isinstance(auth, dict) or auth.get("type") not in ("basic", "bearer"):
                raise ConfigError("auth.type", "must be basic or bearer")
            needed = ("username", "password") if auth["type"] == "basic" else ("token",)
            for name in needed:
                if not isinstance(auth.get(name), str) or not auth[name]:
                    raise ConfigError(f"auth.{name}", "is required")
        for name in ("connect_timeout", "read_timeout"):
            value = config.get(name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= MAX_TIMEOUT
            ):
                raise ConfigError(name, f"must be a number of seconds between 0 and {MAX_TIMEOUT:g}")

    def deliver(
        self, rendered: Rendered, *, config: dict[str, Any], delivery_id: str, context: RenderContext
    ) -> DeliveryResult:
        url = config["url"]
        parts = urlsplit(url)
        if parts.scheme == "http" and not _allowed_plain_http(parts.hostname or "", parts.port or 80):
            return DeliveryResult(
                ok=False, error="destination refused: plain http only inside OUTBOUND_ALLOWED_NETWORKS"
            )
        try:
            body = rendered.body()
        except TransformError as exc:
            return DeliveryResult(ok=False, error=str(exc))
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
        timeout = (float(config.get("connect_timeout", 5)), float(config.get("read_timeout", 15)))
        try:
            response = _session().post(
                url, data=body, headers=headers, auth=basic, timeout=timeout, allow_redirects=False
            )
        except outbound.OutboundRefused as exc:
            return DeliveryResult(ok=False, error=f"destination refused: {exc}")
        except requests.Timeout:
            return DeliveryResult(ok=False, error="timeout", retryable=True)
        except requests.ConnectionError as exc:
            if _refused(exc):
                return DeliveryResult(ok=False, error="connection refused", retryable=True)
            return DeliveryResult(ok=False, error=f"connection error: {type(exc).__name__}")
        except requests.RequestException as exc:
            return DeliveryResult(ok=False, error=f"request error: {type(exc).__name__}")
        if 200 <= response.status_code < 300:
            return DeliveryResult(ok=True, status_code=response.status_code)
        return DeliveryResult(
            ok=False,
            status_code=response.status_code,
            error=f"HTTP {response.status_code}: {response.text[:500]}",
            retryable=response.status_code in RETRYABLE_STATUS,
        )


@cache
def _session() -> requests.Session:
    """One guarded session per process: connections to a receiver are kept alive and reused. (A Celery
    prefork child runs one task at a time, so the session is never shared between threads.)"""
    return outbound.http_session()


def _allowed_plain_http(host: str, port: int) -> bool:
    try:
        return outbound.plain_http_allowed(host, port)
    except outbound.OutboundRefused:
        return False
