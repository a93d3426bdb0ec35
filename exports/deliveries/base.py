"""What every delivery is: a small class registered by code in ``exports.deliveries.REGISTRY``.

A delivery sends rendered bytes somewhere and says how it went: ``ok``, or a failure that is ``retryable``
under the spec's retry rule (only web hooks use that: 503, 522, 524, timeout, refused connection) or not.
It never raises for a failure of the destination; it returns a DeliveryResult with the error message.
Every delivery carries ``delivery_id`` so that a receiver can drop a repeat.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from exports.transforms.base import ConfigError, RenderContext, Rendered

__all__ = ["ConfigError", "Delivery", "DeliveryResult", "RenderContext", "Rendered"]


@dataclass(frozen=True)
class DeliveryResult:
    ok: bool
    status_code: int | None = None
    error: str = ""
    # Only meaningful when not ok: the failure is a timeout / refused connection / 503 / 522 / 524.
    retryable: bool = False


class Delivery:
    code: ClassVar[str]

    def validate(self, config: dict[str, Any]) -> None:
        """Raise ConfigError for a configuration that cannot work. ``config`` includes ``"type"``."""

    def deliver(
        self, rendered: Rendered, *, config: dict[str, Any], delivery_id: str, context: RenderContext
    ) -> DeliveryResult:
        raise NotImplementedError


def render_path(template: str, *, context: RenderContext, delivery_id: str, extension: str) -> str:
    """A path template such as ``exports/{queue}/{date}/{delivery_id}.{ext}``; placeholders: ``{queue}``
    (queue name), ``{queue_id}``, ``{account}``, ``{date}`` (YYYY-MM-DD), ``{time}`` (HHMMSS),
    ``{delivery_id}``, ``{ext}``."""
    values = {
        "queue": str(context.queue.get("name", "")),
        "queue_id": str(context.queue.get("id", "")),
        "account": str(context.account.get("identifier", "")),
        "date": context.now.strftime("%Y-%m-%d"),
        "time": context.now.strftime("%H%M%S"),
        "delivery_id": delivery_id,
        "ext": extension,
    }
    try:
        return template.format_map(values)
    except (KeyError, ValueError, IndexError) as exc:
        raise ConfigError("path", f"bad path template: {exc}") from None
