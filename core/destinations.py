"""What a configured destination may hold, checked when it is saved: its URL (parsed without a ValueError escaping,
within ``MAX_URL_LENGTH``), its headers (count and lengths), and the names and paths written at the destination
(no look-alike of ``@`` or ``\\``).

Python's ``urlsplit`` raises ValueError for a URL it cannot take apart (``http://[x]/``, an unclosed ``[``, a
netloc that changes under NFKC normalisation) and ``SplitResult.port`` for a port that is not a number from 0 to
65535. ``split_url`` is the one place those are turned into a reason, so that a caller refuses the field with a
400 naming it instead of answering 500.

The bounds are constants, not settings: they are the service's own input limits (docs/security.md), as the URL
and query-string bounds of ``core.middleware`` are.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import SplitResult, urlsplit

# A destination URL: the length every HTTP stack is known to take (RFC 9110 recommends at least 8,000 octets; some
# proxies and old clients stop near 2,048). A longer path or query is not an endpoint but a payload, and a 60 KB
# hook URL would be read with every queue list and sent with every delivery.
MAX_URL_LENGTH = 2048
# Headers a destination is configured with: the HTTP limits of common servers are 8 KiB for a whole header
# block; these keep one configuration well inside any receiver's limits.
MAX_HEADERS = 50
MAX_HEADER_NAME_LENGTH = 256
MAX_HEADER_VALUE_LENGTH = 4096

# Characters that read as ``\`` but are not one and that NFKC leaves alone (NFKC already maps the full-width
# U+FF3C and the small U+FE68 to ``\``): a Windows FTP server or a mail client may still treat them as one.
_BACKSLASH_LOOKALIKES = frozenset("\u2216\u29f5\u29f9\u2572\u20e5\ufe68\uff3c")
# The same for ``@`` (NFKC maps the full-width U+FF20 and the small U+FE6B to ``@``).
_AT_LOOKALIKES = frozenset("\ufe6b\uff20")


class BadUrl(ValueError):
    """A URL that cannot be used; the message says why (without repeating the URL, which may hold a secret)."""


def split_url(url: str, *, max_length: int = MAX_URL_LENGTH) -> SplitResult:
    """``url`` taken apart, its host and port read once; BadUrl for one that is too long or cannot be parsed."""
    if len(url) > max_length:
        raise BadUrl(f"must be at most {max_length} characters")
    try:
        parts = urlsplit(url)
        parts.hostname  # noqa: B018 - raises ValueError for a bracketed host that is not an IP address
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number from 0 to 65535
    except ValueError as exc:
        raise BadUrl(f"is not a valid URL: {_reason(exc)}") from None
    if parts.port == 0:
        raise BadUrl("is not a valid URL: port 0")
    return parts


def _reason(exc: ValueError) -> str:
    text = str(exc)
    if "Port" in text:
        return "the port must be a number from 1 to 65535"
    if "NFKC" in text:
        return "the host contains characters that change under Unicode normalisation"
    if "IPv6" in text or "IPv4" in text:
        return "a host in [ ] must be an IPv6 address"
    return "it cannot be parsed"


def header_problem(headers: Mapping[Any, Any]) -> tuple[str, str] | None:
    """(the field, why) for the first header over a bound, or None. Only the bounds: each caller checks the
    names and values its own way (reserved names, line breaks, templates)."""
    if len(headers) > MAX_HEADERS:
        return "headers", f"at most {MAX_HEADERS} headers"
    for name, value in headers.items():
        shown = str(name)[:64]
        if len(str(name)) > MAX_HEADER_NAME_LENGTH:
            return f"headers.{shown}", f"a header name must be at most {MAX_HEADER_NAME_LENGTH} characters"
        if isinstance(value, str) and len(value) > MAX_HEADER_VALUE_LENGTH:
            return f"headers.{shown}", f"a header value must be at most {MAX_HEADER_VALUE_LENGTH} characters"
    return None


def _looks_like(char: str, target: str, lookalikes: frozenset[str]) -> bool:
    return char == target or char in lookalikes or unicodedata.normalize("NFKC", char) == target


def lookalike(text: str, targets: Iterable[str] = ("@", "\\"), *, allowed: str = "") -> str | None:
    """The first character of ``text`` that is or reads as one of ``targets`` (``@`` and ``\\``: any character
    whose NFKC form is one of them, and the known look-alikes NFKC keeps), or None. ``allowed``: characters taken
    as they are (a plain ``@`` in a file name is only an ``@``; its full-width twin passes for something else)."""
    table = {"@": _AT_LOOKALIKES, "\\": _BACKSLASH_LOOKALIKES}
    wanted = tuple(targets)
    for char in text:
        if char in allowed or (char.isascii() and char not in wanted):
            continue
        for target in wanted:
            if _looks_like(char, target, table.get(target, frozenset())):
                return char
    return None


def describe(char: str) -> str:
    """The character and its code point (``U+FF20``) for a message."""
    return f"{char!r} (U+{ord(char):04X})"
