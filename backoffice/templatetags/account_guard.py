"""``{% account_guard %}``: the hidden field of a back-office form naming the account the form is shown in, put next
to ``{% csrf_token %}`` in every form that changes something; ``member_view`` refuses its POST when the person has
switched to another account since (``backoffice.members.FORM_ACCOUNT_FIELD``)."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from backoffice.members import FORM_ACCOUNT_FIELD

register = template.Library()


@register.simple_tag(takes_context=True)
def account_guard(context: dict[str, Any]) -> SafeString:
    """The hidden field with the identifier of the account the page is shown in; nothing on a page with no member
    (no account to name)."""
    member = context.get("member")
    if member is None:
        return SafeString("")
    return format_html('<input type="hidden" name="{}" value="{}">', FORM_ACCOUNT_FIELD, member.account.identifier)
