"""What every delivery is: a small class registered by code in ``exports.deliveries.REGISTRY``.

A delivery sends rendered bytes somewhere and says how it went: ``ok``, or a failure that is ``retryable``
under the spec's retry rule (only web hooks use that: 503, 522, 524, timeout, refused connection) or not.
It never raises for a failure of the destination; it returns a DeliveryResult with the error message.
Every delivery carries ``delivery_id`` so that a receiver can drop a repeat.

A delivery declares its secrets (``SECRET_KEYS``, or its own ``mask``/``unmask``/``secrets``): they read as
``MASK`` (API and admin, through ``exports.serializers``), a ``MASK`` sent back keeps the stored value while the
destination (``destination``) stays the same, and they never appear in an error message.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

from core import outbound
from core.secrets import MASK, searchable
from exports.transforms.base import ConfigError, RenderContext, Rendered

__all__ = [
    "ANSWER_BYTES",
    "SENT_CHARS",
    "ConfigError",
    "Delivery",
    "DeliveryResult",
    "RenderContext",
    "Rendered",
    "Send",
    "last_line",
    "short_answer",
    "short_sent",
]

DEFAULT_TIME_BUDGET_SECONDS = 60.0

# What an attempt keeps of what was sent (characters) and of the answer (bytes of its UTF-8 text).
SENT_CHARS = 500
ANSWER_BYTES = 512

MASKED = (
    f"is masked ({MASK}): give the value. A stored secret is kept only at its own place and for the same "
    "destination (host and port)."
)


@dataclass(frozen=True)
class DeliveryResult:
    ok: bool
    status_code: int | None = None
    error: str = ""
    # Only meaningful when not ok: the failure is a timeout / refused connection / 503 / 522 / 524.
    retryable: bool = False
    # Only meaningful when not ok: the destination itself failed (no connection, a timeout, a dropped connection,
    # a 5xx or a temporary server reply), as opposed to a refusal of this request (4xx, a login, a path). Only
    # these failures count towards the destination's circuit breaker (``exports.circuit``).
    unreachable: bool = False
    # With ``unreachable``: no connection was made at all (refused, a connect timeout, no route, a TLS or SSH
    # handshake broken off): a failure of the host, counted by the breaker of its connections.
    connecting: bool = False
    # Set by ``exports.circuit`` instead of sending: the destination's breaker is open; nothing was sent and it is
    # not an attempt: the delivery waits until then, keeping its place and its retry budget.
    paused_until: datetime | None = None

    # What was sent, in short and without a secret (``SENT_CHARS`` at most): a web hook's method, URL (its secrets
    # masked), size and content type; an e-mail's recipients, subject and attachment; a file's remote path and size.
    sent: str = ""
    # The start of what the destination answered (``ANSWER_BYTES`` at most, secrets it echoes redacted): a web
    # hook's body, whatever its status; an FTP or SMTP server's last reply line; an SFTP server's identification.
    answer: str = ""


@dataclass(frozen=True)
class Send:
    """One send of an export: what ``Delivery.deliver`` was given, handed to the delivery's ``send``."""

    rendered: Rendered
    config: dict[str, Any]
    delivery_id: str
    context: RenderContext
    # The seconds this send may take at most (what is left of the task's time limit), on top of the configured
    # timeouts; None: no limit of its own.
    timeout: float | None = None

    def within(self, configured: float) -> float:
        """The timeout of each operation of a send whose configured timeout is ``configured`` seconds (FTP, SFTP,
        SMTP): that, or what the send has left if that is less, as the one timeout policy decides
        (``core.outbound.timeouts``). The task's time limit bounds the whole send."""
        return outbound.timeouts(connect=configured, read=configured, total=configured, left=self.timeout).read


def short_sent(text: str) -> str:
    """``text`` within ``SENT_CHARS`` characters, ``…`` marking a cut."""
    return text if len(text) <= SENT_CHARS else text[: SENT_CHARS - 1] + "…"


def short_answer(text: str) -> str:
    """The start of ``text`` whose UTF-8 form is at most ``ANSWER_BYTES`` bytes (a character cut in two is left
    out)."""
    raw = text.encode("utf-8", errors="replace")
    return text if len(raw) <= ANSWER_BYTES else raw[:ANSWER_BYTES].decode("utf-8", errors="ignore")


def last_line(reply: str) -> str:
    """The last non-empty line of a (multi-line) server reply, within ``ANSWER_BYTES``."""
    lines = [line.strip() for line in reply.splitlines() if line.strip()]
    return short_answer(lines[-1] if lines else "")


class Delivery:
    code: ClassVar[str]
    # Top-level configuration keys whose (string) values are secret.
    SECRET_KEYS: ClassVar[tuple[str, ...]] = ()

    def validate(self, config: dict[str, Any]) -> None:
        """Raise ConfigError for a configuration that cannot work. ``config`` includes ``"type"``."""

    def destination(self, config: dict[str, Any]) -> Any:
        """Where the secrets are sent (a stored secret is only kept for the same one)."""
        return None

    def mask(self, config: dict[str, Any]) -> dict[str, Any]:
        """The configuration as it reads: every secret ``MASK``."""
        return {k: MASK if k in self.SECRET_KEYS and isinstance(v, str) and v else v for k, v in config.items()}

    def unmask(self, config: dict[str, Any], stored: dict[str, Any] | None) -> dict[str, Any]:
        """``config`` with each ``MASK`` replaced by the stored secret, for the same destination; any other
        ``MASK`` (nothing stored there, another destination) stays, and ``validate`` refuses it by name."""
        kept = stored if isinstance(stored, dict) and stored.get("type") == config.get("type") else {}
        same = bool(kept) and self.destination(config) == self.destination(kept)
        return {
            key: kept[key] if value == MASK and key in self.SECRET_KEYS and same and kept.get(key) else value
            for key, value in config.items()
        }

    def secrets(self, config: dict[str, Any]) -> list[str]:
        """The strings an error message must not show."""
        return searchable(config.get(key) for key in self.SECRET_KEYS)

    def time_budget(self, config: dict[str, Any]) -> float:
        """The seconds one send to this destination may take with its configured timeouts (a delivery task
        keeps at least this much of its time limit for each send it starts)."""
        return DEFAULT_TIME_BUDGET_SECONDS

    def deliver(
        self,
        rendered: Rendered,
        *,
        config: dict[str, Any],
        delivery_id: str,
        context: RenderContext,
        timeout: float | None = None,
    ) -> DeliveryResult:
        """Send; ``timeout``: the seconds this send may take at most (what is left of the task's time limit),
        applied on top of the configured timeouts."""
        return self.send(Send(rendered, config, delivery_id, context, timeout))

    def send(self, job: Send) -> DeliveryResult:
        """What each delivery does with one send (``deliver``'s arguments in one object)."""
        raise NotImplementedError


# Path, subject and attachment-name templates: at most this many characters, and what they render to at most this
# many (a placeholder's value is short: a queue name, an identifier, a date), checked as the text is built.
MAX_TEMPLATE_CHARS = 1_000
MAX_RENDERED_CHARS = 4_000
PLACEHOLDERS = ("queue", "queue_id", "account", "date", "time", "delivery_id", "ext")


def template_parts(template: str, *, field: str = "path") -> list[tuple[str, str | None]]:
    """The template as (literal text, placeholder name or None) pairs; ConfigError naming ``field`` for anything
    but text, ``{{``, ``}}`` and the documented placeholders. A format spec or a conversion (``{date:>9}``,
    ``{queue!r}``) is refused: ``str.format`` would allocate a width before any check could see it."""
    if len(template) > MAX_TEMPLATE_CHARS:
        raise ConfigError(field, f"must be at most {MAX_TEMPLATE_CHARS} characters")
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise ConfigError(field, f"bad template: {exc}") from None
    parts: list[tuple[str, str | None]] = []
    for literal, name, spec, conversion in parsed:
        if name is not None and (spec or conversion or name not in PLACEHOLDERS):
            shown = "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
            raise ConfigError(
                field,
                f"{shown[:40]!r} is not a placeholder: use {', '.join('{' + p + '}' for p in PLACEHOLDERS)}, "
                "without a format or conversion (write {{ and }} for braces)",
            )
        parts.append((literal, name))
    return parts


def render_path(template: str, *, context: RenderContext, delivery_id: str, extension: str, field: str = "path") -> str:
    """A path template such as ``exports/{queue}/{date}/{delivery_id}.{ext}``; placeholders: ``{queue}``
    (queue name), ``{queue_id}``, ``{account}``, ``{date}`` (YYYY-MM-DD), ``{time}`` (HHMMSS),
    ``{delivery_id}``, ``{ext}``, and ``{{``/``}}`` for braces. Nothing else (``template_parts``): the template is
    parsed again for every render, as a stored one is not trusted to have passed today's validation, and its
    output is bounded (``MAX_RENDERED_CHARS``) as it is built."""
    values = {
        "queue": str(context.queue.get("name", "")),
        "queue_id": str(context.queue.get("id", "")),
        "account": str(context.account.get("identifier", "")),
        "date": context.now.strftime("%Y-%m-%d"),
        "time": context.now.strftime("%H%M%S"),
        "delivery_id": delivery_id,
        "ext": extension,
    }
    out: list[str] = []
    length = 0
    for literal, name in template_parts(template, field=field):
        for piece in (literal, values[name] if name is not None else ""):
            length += len(piece)
            if length > MAX_RENDERED_CHARS:
                raise ConfigError(field, f"renders to more than {MAX_RENDERED_CHARS} characters")
            out.append(piece)
    return "".join(out)


def refuse_masked(config: dict[str, Any], keys: tuple[str, ...]) -> None:
    for key in keys:
        if isinstance(config.get(key), str) and MASK in config[key]:
            raise ConfigError(key, MASKED)
