"""Deployment checks (``manage.py check --deploy``) for settings whose mistakes only show under real traffic."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Tags, register
from django.core.checks import Warning as CheckWarning


@register(Tags.security, deploy=True)
def check_proxy_trust(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    """Behind a proxy (SECURE_PROXY_SSL_HEADER) every client arrives from the proxy's address unless the
    proxy's X-Forwarded-For entry is trusted: one client's failed logins would then lock out everybody."""
    behind_a_proxy = getattr(settings, "SECURE_PROXY_SSL_HEADER", None) is not None
    if behind_a_proxy and settings.TRUSTED_PROXY_COUNT == 0 and settings.AUTH_FAILURE_LIMIT > 0:
        return [
            CheckWarning(
                "SECURE_PROXY_SSL_HEADER says a proxy is in front, but TRUSTED_PROXY_COUNT is 0: every client has "
                "the proxy's address, so one client's failed authentications lock all of them out (API keys, "
                "/metrics, the admin login).",
                hint="Set TRUSTED_PROXY_COUNT to the number of proxies that append to X-Forwarded-For (usually 1).",
                id="ops.W001",
            )
        ]
    return []
