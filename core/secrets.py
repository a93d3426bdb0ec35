"""Which values of an outgoing request's configuration are secret, how they read back (masked), how a masked value
sent back keeps the stored one, and how secrets are kept out of error messages and logs.

Secrets are known by declaration, not guessed from their names. Used by runtime integrations
(``integrations.services``) and by the web hook export delivery (``exports.deliveries.webhook``).

* Every header value is secret, except the values of the few headers in ``PUBLIC_HEADERS`` (a token hides under
  any name: ``X-Shop-Auth``, ``X-Anything``).
* In a URL, the userinfo (``https://user:password@host``) and every value of its own query string are secret; a
  runtime integration's query value made only of placeholders (``?shop={shop_id}``) carries no literal and is
  shown. A parameter that is not secret belongs in the integration's ``query`` instead, where it is shown.
* The URL's path is secret when declared (``"url.path"`` in ``secret_fields``); a web hook declares it by
  default, since a hook URL is often a capability (``https://hooks.example.com/services/T0/B0/XXXX``).
* Query parameters and body values of a runtime integration are secret when declared in ``secret_fields``:
  ``"query.<name>"``, ``"body.<key>.<key>"`` (``[n]`` for a list element). When a configuration is saved
  without ``secret_fields``, the names that look secret (``apikey``, ``pin``, ``token``, ...) are suggested:
  the suggestion is stored, shown and can be changed; it is never applied behind the declaration's back.

A secret reads as ``MASK``. ``MASK`` sent back keeps the stored value at the same place, but only while the
place is still secret and the destination (scheme, host, port) is the same: otherwise anyone allowed to edit a
configuration could read a secret by declaring it public, or send it to a host of their choosing. Such a
``MASK`` stays as it is and the configuration is refused ("is masked": give the value again), naming the place.
So does a ``MASK`` where nothing is stored (a new header name, query parameter or body key): it is never stored as
a secret, and never dropped silently either.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any
from urllib.parse import SplitResult, quote, quote_plus, unquote, unquote_plus, urlsplit, urlunsplit

MASK = "********"
URL_PATH = "url.path"
# Kept short on purpose: each one names a header whose value is a content negotiation or a client name.
PUBLIC_HEADERS = frozenset({"accept", "accept-encoding", "accept-language", "content-type", "user-agent"})
# Only a suggestion when a configuration is saved without ``secret_fields`` (and for stored configurations
# from before the declaration): never what decides on its own.
_SECRET_WORDS = frozenset(
    {"key", "pin", "otp", "pass", "pwd", "sig", "auth", "session", "cookie", "private", "bearer", "hmac", "cvc", "cvv"}
)
_SECRET_PARTS = ("secret", "token", "passw", "passphrase", "credential", "apikey", "signature", "authoriz")
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_PLACEHOLDERS_ONLY = re.compile(r"(?:\{[A-Za-z_][A-Za-z0-9_]*\})+")
_PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}|\{\{|\}\}")
_INDEX = re.compile(r"\[(\d+)\]")
# Shorter strings are not searched for in messages (they would hide ordinary words); pieces of a value (the key
# of "Bearer <key>", a path segment) only from this length.
_MIN_SECRET = 4
_MIN_PIECE = 6


# --- headers ---------------------------------------------------------------------------------------------


def is_secret_header(name: str) -> bool:
    return name.strip().lower() not in PUBLIC_HEADERS


def mask_headers(headers: Mapping[str, Any]) -> dict[str, Any]:
    return {k: MASK if is_secret_header(k) and _filled(v) else v for k, v in headers.items()}


def unmask_headers(
    new: Mapping[str, Any], stored: Mapping[str, Any] | None, *, same_destination: bool
) -> dict[str, Any]:
    """``new`` with each ``MASK`` replaced by the stored value of the same (secret) header; see the module."""
    stored = stored or {}
    out: dict[str, Any] = {}
    for name, value in new.items():
        if value == MASK and name in stored and same_destination and is_secret_header(name):
            out[name] = stored[name]
        else:
            out[name] = value  # a mask with nothing to keep here stays: the configuration's checks refuse it
    return out


# --- URLs ------------------------------------------------------------------------------------------------


def _split(url: str) -> SplitResult | None:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        return None
    return parts


def origin(url: Any) -> tuple[str, str, int | None] | None:
    parts = _split(url) if isinstance(url, str) else None
    if parts is None or not parts.hostname:
        return None
    default = {"https": 443, "http": 80}.get(parts.scheme.lower())
    return parts.scheme.lower(), parts.hostname.lower(), parts.port or default


def same_origin(url: Any, other: Any) -> bool:
    """Whether both URLs go to the same scheme, host and port (where a kept secret would be sent)."""
    mine = origin(url)
    return mine is not None and mine == origin(other)


def _query_pairs(query: str) -> list[tuple[str, str, bool]]:
    """``(name, value, has_value)`` of each ``&`` piece, as written (not decoded)."""
    pairs = []
    for piece in query.split("&") if query else []:
        name, sep, value = piece.partition("=")
        pairs.append((name, value, bool(sep)) if sep else ("", name, False))
    return pairs


def _join_pairs(pairs: list[tuple[str, str, bool]]) -> str:
    return "&".join(f"{name}={value}" if has_value else value for name, value, has_value in pairs)


def _secret_query_value(value: str, *, placeholders: bool) -> bool:
    return bool(value) and not (placeholders and _PLACEHOLDERS_ONLY.fullmatch(value))


def _userinfo(parts: SplitResult) -> str:
    return parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""


def mask_url(url: str, *, path_secret: bool, placeholders: bool) -> str:
    """The URL as shown: userinfo and literal query values masked, the path too when ``path_secret``.
    ``placeholders``: the URL is a runtime integration's template (a placeholder-only value is shown)."""
    parts = _split(url)
    if parts is None:
        return MASK if url else url
    netloc = parts.netloc
    if "@" in netloc:
        netloc = MASK + "@" + netloc.rpartition("@")[2]
    path = parts.path
    if path_secret and path not in ("", "/"):
        path = "/" + MASK
    pairs = [
        (name, MASK if _secret_query_value(value, placeholders=placeholders) else value, has_value)
        for name, value, has_value in _query_pairs(parts.query)
    ]
    return urlunsplit((parts.scheme, netloc, path, _join_pairs(pairs), parts.fragment))


def unmask_url(new: str, stored: str | None, *, path_secret: bool, placeholders: bool) -> str:
    """``new`` with each masked part (userinfo, path, query value) replaced by the stored URL's part. Pass
    ``stored=None`` when the origin changed: the masks then stay and the configuration is refused."""
    if MASK not in new or not stored:
        return new
    mine, theirs = _split(new), _split(stored)
    if mine is None or theirs is None:
        return new
    netloc = mine.netloc
    if _userinfo(mine) == MASK and _userinfo(theirs):
        netloc = _userinfo(theirs) + "@" + mine.netloc.rpartition("@")[2]
    path = mine.path
    if path == "/" + MASK and path_secret and theirs.path not in ("", "/"):
        path = theirs.path
    kept: dict[str, list[str]] = {}
    for name, value, _ in _query_pairs(theirs.query):
        kept.setdefault(name, []).append(value)
    seen: dict[str, int] = {}
    pairs = []
    for name, value, has_value in _query_pairs(mine.query):
        index = seen[name] = seen.get(name, -1) + 1
        candidates = kept.get(name, [])
        if (
            value == MASK
            and index < len(candidates)
            and _secret_query_value(candidates[index], placeholders=placeholders)
        ):
            value = candidates[index]
        pairs.append((name, value, has_value))
    return urlunsplit((mine.scheme, netloc, path, _join_pairs(pairs), mine.fragment))


def url_secrets(template: str, rendered: str | None = None, *, path_secret: bool, placeholders: bool) -> list[str]:
    """The secret strings of a URL (and of the same URL with its placeholders filled in, ``rendered``)."""
    found: list[str] = []
    parts = _split(template)
    if parts is None:
        return [template]
    filled = _split(rendered) if rendered else None
    for source in (parts, filled):
        if source is not None and _userinfo(source):
            found += [_userinfo(source), source.username or "", source.password or ""]
    filled_pairs = _query_pairs(filled.query) if filled is not None else []
    for index, (_, value, _) in enumerate(_query_pairs(parts.query)):
        if _secret_query_value(value, placeholders=placeholders):
            found += [value, *_literal_pieces(value)]
            if index < len(filled_pairs):
                found.append(filled_pairs[index][1])
    if path_secret:
        found += [parts.path, *(piece for segment in parts.path.split("/") for piece in _literal_pieces(segment))]
        if filled is not None:
            found.append(filled.path)
    return found


def _literal_pieces(template: str) -> list[str]:
    return [piece for piece in _PLACEHOLDER.split(template) if len(piece) >= _MIN_PIECE]


# --- declared paths (query and body of a runtime integration) ---------------------------------------------


def leaves(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    """Every scalar of a JSON template with its path (``body.card.pin``, ``body.lines[0].code``)."""
    if isinstance(value, dict):
        for key, sub in value.items():
            yield from leaves(sub, f"{path}.{key}")
    elif isinstance(value, list):
        for index, sub in enumerate(value):
            yield from leaves(sub, f"{path}[{index}]")
    else:
        yield path, value


def suggest(query: Any, body: Any) -> list[str]:
    """The declaration suggested for a configuration saved without one: names that look secret."""
    found = []
    if isinstance(query, dict):
        found += [f"query.{name}" for name in query if looks_secret(str(name))]
    found += [path for path, _ in leaves(body, "body") if looks_secret(_last_key(path))]
    return found


def looks_secret(name: str) -> bool:
    """``api_key``, ``accessToken``, ``pin``, ``client-secret``: yes; ``shipping``, ``keyword``, ``k``: no."""
    words = [word.lower() for word in _WORD.findall(name)]
    return any(word in _SECRET_WORDS or any(part in word for part in _SECRET_PARTS) for word in words)


def _last_key(path: str) -> str:
    return _INDEX.sub("", path).rpartition(".")[2]


def paths(query: Any, body: Any) -> set[str]:
    """Every place of a configuration that ``secret_fields`` may name."""
    found = {URL_PATH}
    if isinstance(query, dict):
        found |= {f"query.{name}" for name in query}
    found |= {path for path, _ in leaves(body, "body")} if body is not None else set()
    return found


def mask_declared(value: Any, root: str, declared: Iterable[str]) -> Any:
    """``value`` (a query object or a body template) with each declared place masked."""
    declared = set(declared)

    def walk(item: Any, path: str) -> Any:
        if isinstance(item, dict):
            return {key: walk(sub, f"{path}.{key}") for key, sub in item.items()}
        if isinstance(item, list):
            return [walk(sub, f"{path}[{index}]") for index, sub in enumerate(item)]
        return MASK if path in declared and _filled(item) else item

    return walk(value, root)


def unmask_declared(new: Any, stored: Any, root: str, declared: Iterable[str], *, same_destination: bool) -> Any:
    """``new`` with each ``MASK`` replaced by the stored value at the same declared place (see the module)."""
    declared = set(declared)
    stored_leaves = dict(leaves(stored, root)) if stored is not None else {}

    def walk(item: Any, path: str) -> Any:
        if isinstance(item, dict):
            out = {}
            for key, sub in item.items():
                out[key] = walk(sub, f"{path}.{key}")
            return out
        if isinstance(item, list):
            return [walk(sub, f"{path}[{index}]") for index, sub in enumerate(item)]
        if item == MASK and path in stored_leaves and path in declared and same_destination:
            return stored_leaves[path]
        return item

    return walk(new, root)


def masked_places(value: Any, root: str) -> list[str]:
    """The places of ``value`` still holding ``MASK`` (a secret that could not be kept)."""
    return [path for path, leaf in leaves(value, root) if isinstance(leaf, str) and MASK in leaf]


def declared_values(value: Any, root: str, declared: Iterable[str]) -> list[str]:
    declared = set(declared)
    return [_text(leaf) for path, leaf in leaves(value, root) if path in declared and _filled(leaf)]


# --- a runtime integration ------------------------------------------------------------------------------


def integration_view(*, url: str, query: Any, headers: Any, body: Any, secret_fields: Any) -> dict[str, Any]:
    """``url``, ``query``, ``headers`` and ``body`` of a runtime integration as they read (API and admin)."""
    declared = _declared(secret_fields)
    return {
        "url": mask_url(url, path_secret=URL_PATH in declared, placeholders=True),
        "query": mask_declared(query or {}, "query", declared),
        "headers": mask_headers(headers) if isinstance(headers, dict) else headers,
        "body": mask_declared(body, "body", declared),
    }


def integration_secrets(
    *,
    url: str,
    query: Any,
    headers: Any,
    body: Any,
    secret_fields: Any,
    rendered: Mapping[str, Any] | None = None,
) -> list[str]:
    """The strings to redact from a runtime integration's errors and logs: its secrets as stored (templates)
    and, given ``rendered`` (``url``, ``query``, ``headers``, ``body`` of one request), as sent."""
    declared = _declared(secret_fields)
    rendered = rendered or {}
    found: list[Any] = []
    for values in (headers, rendered.get("headers")):
        if isinstance(values, dict):
            found += [value for name, value in values.items() if is_secret_header(str(name))]
    for root, values in (("query", query), ("query", rendered.get("query")), ("body", body)):
        found += declared_values(values, root, declared)
    if "body" in rendered:
        found += declared_values(rendered["body"], "body", declared)
    found += url_secrets(url, rendered.get("url"), path_secret=URL_PATH in declared, placeholders=True)
    return searchable(found)


def _declared(secret_fields: Any) -> list[str]:
    return [str(place) for place in secret_fields] if isinstance(secret_fields, list) else []


# --- redaction -------------------------------------------------------------------------------------------


def searchable(values: Iterable[Any]) -> list[str]:
    """Secret values as the strings to search messages for: each value, its encoded and decoded forms, the
    pieces of a ``<scheme> <key>`` value; longest first, the short ones left out."""
    found: set[str] = set()
    for value in values:
        if not _filled(value):
            continue
        text = _text(value)
        for form in (text, quote(text, safe=""), quote_plus(text, safe=""), unquote(text), unquote_plus(text)):
            found.add(form)
            found.update(piece for piece in form.split() if len(piece) >= _MIN_PIECE)
    return sorted((v for v in found if len(v) >= _MIN_SECRET and v != MASK), key=len, reverse=True)


def redact(message: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if secret and secret != MASK:
            message = message.replace(secret, MASK)
    return message


def redact_data(value: Any, secrets: list[str]) -> Any:
    """Every string of a JSON value redacted (an integrator's error body echoing a credential)."""
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {redact(str(k), secrets): redact_data(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_data(v, secrets) for v in value]
    return value


def _filled(value: Any) -> bool:
    return value is not None and value != "" and not isinstance(value, bool | dict | list)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


# --- logs ------------------------------------------------------------------------------------------------

_hidden: ContextVar[tuple[str, ...]] = ContextVar("outgoing_request_secrets", default=())


@contextmanager
def hidden(secrets: Iterable[str]) -> Iterator[None]:
    """While the block runs (an outgoing request), log lines of the HTTP library have these strings redacted."""
    token = _hidden.set(tuple(secrets))
    try:
        yield
    finally:
        _hidden.reset(token)


class OutgoingRequestFilter(logging.Filter):
    """urllib3's debug lines (``"GET /hooks/<token>?apikey=... HTTP/1.1" 200``) with the query string dropped and
    the secrets of the request being sent (``hidden``) redacted: DEBUG logging must not turn a credential into a
    log line."""

    def filter(self, record: logging.LogRecord) -> bool:
        secrets = _hidden.get()
        if isinstance(record.args, tuple):
            record.args = tuple(self._clean(arg, secrets) if isinstance(arg, str) else arg for arg in record.args)
        if isinstance(record.msg, str) and secrets:
            record.msg = redact(record.msg, secrets)
        return True

    @staticmethod
    def _clean(arg: str, secrets: tuple[str, ...]) -> str:
        if "?" in arg:
            arg = arg.split("?", 1)[0] + "?[query hidden]"
        return redact(arg, secrets)


def install_log_filter() -> None:
    for name in ("urllib3.connectionpool", "urllib3.connection"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, OutgoingRequestFilter) for f in logger.filters):
            logger.addFilter(OutgoingRequestFilter())
