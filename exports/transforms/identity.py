"""Identity: no transform. The wrapper ``{element_key: entity, ...}`` as JSON (spec: Events, Exported wrapper).

Config: ``{"type": "identity"}``, optionally ``"skip_voided": true`` or
``"skip_if": {"path": "voided", "equals": true}`` (the skip rules every transform shares, in ``common``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import IO, Any

from core.jsonenc import DecimalJSONEncoder
from exports.transforms.base import (
    MAX_STREAM_BYTES,
    STREAM_TIMEOUT_SECONDS,
    Element,
    RenderContext,
    Rendered,
)
from exports.transforms.common import CheckedTransform, RenderBudget
from exports.transforms.described import Described, ElementSchema


class IdentityTransform(CheckedTransform):
    """Checks the shared skip rules only (``CheckedTransform.check``)."""

    code = "identity"

    def describe(self, config: dict[str, Any], element: ElementSchema) -> Described:
        """The entity type's published wrapper (``Export<Entity>``, ``exports.openapi``)."""
        self.check(config)
        return Described("application/json", "json", json_schema=dict(element.wrapper))

    def render(self, elements: list[Element], context: RenderContext, config: dict[str, Any]) -> Rendered:
        wrapper = {element.element_key: element.entity for element in elements}
        content = _dumps(wrapper)
        return Rendered(content=content.encode(), content_type="application/json", extension="json")

    def render_to(
        self, elements: Iterable[Element], context: RenderContext, config: dict[str, Any], out: IO[bytes]
    ) -> Rendered:
        """The same wrapper, written one element at a time."""
        budget = RenderBudget(timeout=STREAM_TIMEOUT_SECONDS, max_bytes=MAX_STREAM_BYTES)
        start = out.tell()
        out.write(b"{")
        for count, element in enumerate(elements):
            if count:
                out.write(b",")
            out.write(_dumps(element.element_key).encode())
            out.write(b":")
            out.write(_dumps(element.entity).encode())
            if count % 500 == 499:
                budget.check_time()
                budget.check_size(out.tell() - start)
        out.write(b"}")
        return Rendered(b"", "application/json", "json", file=out)


def _dumps(value: Any) -> str:
    return json.dumps(value, cls=DecimalJSONEncoder, ensure_ascii=False, separators=(",", ":"))
