"""An order import costs the same SQL whatever its size: the request and the materialising task alike
(docs/benchmarks.md, imports)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.support.imports import materialise_pending, order, post

pytestmark = [
    pytest.mark.django_db,
    # SQLite's bulk_create splits the log rows into statements of at most 999 parameters.
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the one-statement insert is PostgreSQL's"),
]


def queries_of_an_import(client, tenant, size: int, prefix: str) -> tuple[int, int]:
    """The statements of the request that queues ``size`` orders, and of the task that materialises them."""
    body = {"orders": [order(f"{prefix}-{n}") for n in range(size)]}
    with CaptureQueriesContext(connection) as request:
        assert post(client, tenant, "incoming_orders", body, stock_location="shop-1").status_code == 200
    with CaptureQueriesContext(connection) as task:
        assert materialise_pending(tenant) == size
    return len(request), len(task)


def test_the_statements_of_an_order_import_do_not_grow_with_its_orders(client, tenant):
    queries_of_an_import(client, tenant, 1, "first")  # the key's first use is recorded once, not by each request
    one = queries_of_an_import(client, tenant, 1, "small")
    many = queries_of_an_import(client, tenant, 100, "large")

    assert many == one
