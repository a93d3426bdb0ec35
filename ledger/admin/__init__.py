"""The ledger in the Django admin, one module per area."""

from ledger.admin import catalog, checkouts, registers, stock  # noqa: F401
