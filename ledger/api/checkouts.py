"""REST API of the ledger's checkouts (filled in by its area)."""

from __future__ import annotations

from typing import Any

from rest_framework.routers import SimpleRouter

pos_urls: list[Any] = []


def register(router: SimpleRouter) -> None:
    """Routes of this area under /api/v1/."""
