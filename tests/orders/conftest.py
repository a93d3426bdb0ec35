"""Shared by the orders' tests: the POS and admin API clients of the ledger's and the API's tests."""

from __future__ import annotations

from tests.api.conftest import api  # noqa: F401  (shared fixtures)
from tests.ledger.conftest import pos, register  # noqa: F401  (shared fixtures)
