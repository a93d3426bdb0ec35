"""The example values the ledger's API documents share (OpenAPI examples only; nothing reads them)."""

from __future__ import annotations

# Where a sale or a statement was made, as its document's ``source`` says it.
SOURCE = {
    "market_id": "dk",
    "market_name": "Denmark",
    "shop_id": "shop-1",
    "shop_name": "Copenhagen",
    "register_id": "reg-1",
    "register_name": "Till 1",
}
