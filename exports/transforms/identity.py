"""Identity: no transform. The wrapper ``{element_key: entity, ...}`` as JSON (spec: Events, Exported wrapper).

Config: ``{"type": "identity"}``, optionally ``"skip_voided": true`` or
``"skip_if": {"path": "voided", "equals": true}`` (the skip rules every transform shares, in ``common``).
"""

from __future__ import annotations

import json
from typing import Any

from accounts.jsonenc import DecimalJSONEncoder
from exports.transforms.base import Element, RenderContext, Rendered, Transform
from exports.transforms.common import skip_reason_for, validate_skip


class IdentityTransform(Transform):
    code = "identity"

    def validate(self, config: dict[str, Any]) -> None:
        validate_skip(config)

    def skip_reason(self, element: Element, config: dict[str, Any]) -> str | None:
        return skip_reason_for(element, config)

    def render(self, elements: list[Element], context: RenderContext, config: dict[str, Any]) -> Rendered:
        wrapper = {element.element_key: element.entity for element in elements}
        content = json.dumps(wrapper, cls=DecimalJSONEncoder, ensure_ascii=False, separators=(",", ":"))
        return Rendered(content=content.encode(), content_type="application/json", extension="json")
