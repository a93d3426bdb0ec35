"""Try-outs: previews, test sends, test calls and baskets priced on a page, the work a caller asks for to see what
a configuration does (a render, a send to the destination, a call to the integrator, the campaigns run). Each
costs what a real one does and leaves no trace in the data, so they are rate-limited per account and per caller
(an API key, or a staff user in the admin) through ``core.ratelimit``: ``PREVIEW_RATE_LIMIT_PER_ACCOUNT`` and
``PREVIEW_RATE_LIMIT_PER_KEY`` in windows of ``PREVIEW_RATE_WINDOW_SECONDS``, shared by every process. Past
either, 429 with ``Retry-After``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings

from accounts.models import Account, ApiKey
from core import ratelimit
from core.ratelimit import RateLimited

if TYPE_CHECKING:
    from rest_framework.request import Request

__all__ = ["TOO_MANY", "RateLimited", "TryOutThrottle", "charge"]

TOO_MANY = "Too many previews, test sends and test calls: try again after the delay in the Retry-After header."


def charge(*, account: Account, caller: str) -> None:
    """Count one try-out of ``caller`` (``key:<id>`` or ``user:<id>``) in ``account``. Raises RateLimited (429,
    ``wait`` seconds) when the account or the caller is at its limit."""
    wait = ratelimit.take(
        [
            (f"tryout:account:{account.pk}", settings.PREVIEW_RATE_LIMIT_PER_ACCOUNT),
            (f"tryout:{caller}", settings.PREVIEW_RATE_LIMIT_PER_KEY),
        ],
        window_seconds=settings.PREVIEW_RATE_WINDOW_SECONDS,
    )
    if wait:
        raise RateLimited(TOO_MANY, wait=wait)


class TryOutThrottle:
    """The try-out limits of an API endpoint (``throttle_classes`` of a preview or test action). DRF checks it
    after the permissions, so only a key that may make the request counts; a refusal raises RateLimited (whose
    answer carries ``Retry-After``). Nothing of the REST framework is imported at run time: the admin imports
    this module before the framework's settings may import this app's authentication."""

    def allow_request(self, request: Request, view: object) -> bool:
        api_key = request.auth  # what accounts.authentication authenticated
        if isinstance(api_key, ApiKey):
            charge(account=api_key.account, caller=f"key:{api_key.pk}")
        return True

    def wait(self) -> None:
        return None
