"""Admin widgets that let staff edit JSON configuration as rows of inputs instead of JSON text.

``RowsWidget`` keeps the value where a JSON form field expects it: a hidden input holding the JSON text. A small
script (``static/admin/backoffice/rows.js``) draws a table of inputs from it and writes the rows back into it on
every change, so the server reads the same JSON whether a browser, a test client or a script posts the form.
"""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.utils.html import format_html
from django.utils.safestring import SafeString

from core.jsonenc import DecimalJSONEncoder


class RowsWidget(forms.Widget):
    """A JSON object (``shape="object"``: name -> value rows) or a JSON list of objects (``shape="list"``: one
    row per object, one input per column) edited as a table of rows.

    ``columns`` are ``{"key", "label", "choices"?: [[value, label], ...], "secret"?: bool, "placeholder"?}``;
    an object's rows have the columns ``name`` and ``value``. A value equal to ``mask`` is shown in a password
    input, so a masked secret stays masked and is sent back as the mask (which keeps the stored secret).
    """

    def __init__(
        self,
        *,
        columns: list[dict[str, Any]],
        shape: str = "list",
        add_label: str = "Add a row",
        mask: str = "",
        attrs: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(attrs)
        self.columns = columns
        self.shape = shape
        self.add_label = add_label
        self.mask = mask

    class Media:
        js = ["admin/backoffice/rows.js"]
        css = {"all": ["admin/backoffice/forms.css"]}

    def format_value(self, value: Any) -> str:
        if value is None or value == "":
            return "{}" if self.shape == "object" else "[]"
        if isinstance(value, str):
            return value  # already JSON text (a bound form, or JSONField.prepare_value)
        return json.dumps(value, cls=DecimalJSONEncoder, ensure_ascii=False)

    def render(self, name: str, value: Any, attrs: dict[str, Any] | None = None, renderer: Any = None) -> SafeString:
        element_id = (attrs or {}).get("id") or self.attrs.get("id") or f"id_{name}"
        spec = {"columns": self.columns, "shape": self.shape, "add": self.add_label, "mask": self.mask}
        return format_html(
            '<input type="hidden" name="{}" id="{}" value="{}" class="rows-value">'
            '<div class="rows-editor" data-for="{}" data-spec="{}"></div>',
            name,
            element_id,
            self.format_value(value),
            element_id,
            json.dumps(spec),
        )

    def value_from_datadict(self, data: Any, files: Any, name: str) -> Any:
        return data.get(name)
