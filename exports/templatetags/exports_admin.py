"""Template filters of the exports admin pages."""

from __future__ import annotations

from django import template

from exports.forms import pretty

register = template.Library()


@register.filter(name="pretty")
def pretty_filter(content: str, content_type: str) -> str:
    """A rendered export as staff read it: JSON indented, anything else as it is."""
    return pretty(content or "", content_type or "")
