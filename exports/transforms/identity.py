"""Identity: no transform. The wrapper ``{element_key: entity, ...}`` as JSON (spec: Events, Exported wrapper).

Config: ``{"type": "identity"}`` and optionally ``{"skip_if": {"path": "voided", "equals": true}}``.
"""

from __future__ import annotations

import json
from typing import Any

from accounts.jsonenc import DecimalJSONEncoder
from exports.transforms.base import Element, RenderContext, Rendered, Transform


class IdentityTransform(Transform):
    code = "identity"

    def render(self, elements: list[Element], context: RenderContext, config: dict[str, Any]) -> Rendered:
        wrapper = {element.element_key: element.entity for element in elements}
        content = json.dumps(wrapper, cls=DecimalJSONEncoder, ensure_ascii=False, separators=(",", ":"))
        return Rendered(content=content.encode(), content_type="application/json", extension="json")
