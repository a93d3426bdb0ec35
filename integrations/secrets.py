"""Which parts of a runtime integration are secret, how they read back (masked) and how they are kept out of
errors and logs.

* Header values are secret unless the header is one of the plainly public ones (``Accept``, ``Content-Type``,
  ...): a token hides under any custom name (``X-Shop-Auth``), so the safe default is to mask.
* Query values and body values are secret when their name looks secret (``apikey``, ``token``, ``secret``,
  ``password``, ``signature``, ... the rule of export deliveries plus ``key``/``sig``/``auth``).
* Masked values read as ``MASK``; ``MASK`` sent back keeps the stored value (so a client can PUT what it read).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import Any

from exports.serializers import MASK, is_secret_key

__all__ = ["MASK", "is_secret_header", "is_secret_name", "mask_headers", "mask_named", "redact", "unmask"]

PUBLIC_HEADERS = frozenset(
    {
        "accept",
        "accept-language",
        "accept-encoding",
        "content-type",
        "user-agent",
        "cache-control",
        "x-request-id",
        "x-correlation-id",
    }
)
_SECRET_NAME = re.compile(r"key|sig|auth|pass|secret|token|credential|session|cookie", re.IGNORECASE)


def is_secret_header(name: str) -> bool:
    return name.strip().lower() not in PUBLIC_HEADERS


def is_secret_name(name: str) -> bool:
    return is_secret_key(name) or bool(_SECRET_NAME.search(name))


def mask_headers(headers: dict[str, Any]) -> dict[str, Any]:
    return {k: MASK if is_secret_header(k) and isinstance(v, str) and v else v for k, v in headers.items()}


def mask_named(values: Any) -> Any:
    """Values whose key looks secret replaced by MASK, at any depth (query, body)."""
    if isinstance(values, dict):
        return {
            k: MASK if is_secret_name(str(k)) and isinstance(v, str) and v else mask_named(v) for k, v in values.items()
        }
    if isinstance(values, list):
        return [mask_named(v) for v in values]
    return values


def unmask(new: Any, stored: Any) -> Any:
    """``new`` with every ``MASK`` replaced by the stored value at the same path (dropped when none)."""
    if isinstance(new, dict):
        stored_dict = stored if isinstance(stored, dict) else {}
        out: dict[str, Any] = {}
        for key, value in new.items():
            if value == MASK:
                if key in stored_dict:
                    out[key] = stored_dict[key]
            else:
                out[key] = unmask(value, stored_dict.get(key))
        return out
    if isinstance(new, list):
        stored_list = stored if isinstance(stored, list) else []
        return [unmask(v, stored_list[i] if i < len(stored_list) else None) for i, v in enumerate(new)]
    return new


def secret_values(*, headers: dict[str, Any], query: dict[str, Any], body: Any) -> list[str]:
    """Every secret string of a configuration (stored or rendered), and the parts of a ``<scheme> <key>``."""
    found: list[str] = []
    for name, value in headers.items():
        if is_secret_header(name) and isinstance(value, str):
            found.append(value)
    _named(query, found)
    _named(body, found)
    parts = [part for value in found for part in value.split() if len(part) >= 6]
    return sorted({v for v in [*found, *parts] if len(v) >= 4}, key=len, reverse=True)


def _named(values: Any, found: list[str]) -> None:
    if isinstance(values, dict):
        for key, value in values.items():
            if is_secret_name(str(key)) and isinstance(value, str):
                found.append(value)
            else:
                _named(value, found)
    elif isinstance(values, list):
        for value in values:
            _named(value, found)


def redact(message: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if secret and secret != MASK:
            message = message.replace(secret, MASK)
    return message


class QueryStringFilter(logging.Filter):
    """Drops query strings from urllib3's debug lines (``"GET /pay?apikey=... HTTP/1.1" 200``): a runtime
    integration's query may carry a key, and DEBUG logging must not turn it into a log line."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(
                arg.split("?", 1)[0] + "?[query hidden]" if isinstance(arg, str) and "?" in arg else arg
                for arg in record.args
            )
        return True


def install_log_filter() -> None:
    logger = logging.getLogger("urllib3.connectionpool")
    if not any(isinstance(f, QueryStringFilter) for f in logger.filters):
        logger.addFilter(QueryStringFilter())
