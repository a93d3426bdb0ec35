"""The ledger's REST API: reads under ``/api/v1/`` and the POS API under ``/api/v1/pos/``, one module per area."""

from __future__ import annotations

from typing import Any

from rest_framework.routers import SimpleRouter

from ledger.api import catalog, checkouts, registers, stock

AREAS = (catalog, checkouts, registers, stock)


def register(router: SimpleRouter) -> None:
    for area in AREAS:
        area.register(router)


pos_urls: list[Any] = [url for area in AREAS for url in area.pos_urls]
