"""Concurrent stock moves lose no update and do not deadlock (spec: Stock event).

Real transactions in several threads, each with its own database connection. On PostgreSQL this exercises
the row locks (taken in one order) and the insert of a first level racing another; SQLite serialises
writers (IMMEDIATE transactions), so there the test only guards the arithmetic.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.db import connection

from ledger.models import StockEvent, StockLevel
from ledger.services.stock import StockMove, apply_stock_moves
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db(transaction=True)
THREADS = 4
ROUNDS = 15
AT = datetime(2025, 1, 15, 9, 30, tzinfo=UTC)


def run_in_threads(work: Callable[[int], None]) -> list[BaseException]:
    barrier = threading.Barrier(THREADS)
    failures: list[BaseException] = []

    def target(n: int) -> None:
        try:
            barrier.wait(timeout=30)
            work(n)
        except BaseException as exc:  # reported to the test below, not lost in the thread
            failures.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=target, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread hung (deadlock?)"
    return failures


def test_concurrent_sales_of_new_items_in_opposite_orders_lose_no_update(tenant: Tenant):
    products = ["a", "b", "c"]

    def sell(n: int) -> None:
        # Half the threads touch the items in reverse order: without ordered locks this deadlocks.
        order = products if n % 2 else list(reversed(products))
        for _ in range(ROUNDS):
            moves = [
                StockMove(
                    stock_location=tenant.stock_location,
                    product_id=p,
                    variant_id="",
                    type="sale",
                    timestamp=AT,
                    adjustment=Decimal("-1"),
                )
                for p in order
            ]
            apply_stock_moves(account=tenant.account, moves=moves)

    assert run_in_threads(sell) == []
    levels = dict(StockLevel.objects.values_list("product_id", "quantity"))
    assert levels == {p: Decimal(-THREADS * ROUNDS) for p in products}
    assert StockEvent.objects.count() == THREADS * ROUNDS * len(products)


def test_a_stock_count_racing_sales_records_the_level_it_replaced(tenant: Tenant):
    StockLevel.objects.create(
        account=tenant.account, stock_location=tenant.stock_location, product_id="a", quantity=1000
    )

    def work(n: int) -> None:
        for _ in range(ROUNDS):
            move = StockMove(
                stock_location=tenant.stock_location,
                product_id="a",
                variant_id="",
                type="stock_count_reset" if n == 0 else "sale",
                timestamp=AT,
                new_stock_value=Decimal("1000") if n == 0 else None,
                adjustment=None if n == 0 else Decimal("-1"),
                stock_count_id="c" if n == 0 else "",
            )
            apply_stock_moves(account=tenant.account, moves=[move])

    assert run_in_threads(work) == []
    # Replaying the events in the order they were stored must reach the stored level: no update was lost
    # and every count's expected figure is the level at that moment.
    running = Decimal(1000)
    for event in StockEvent.objects.order_by("id"):
        if event.adjustment is not None:
            running += event.adjustment
        else:
            assert event.stock_count_expected == running
            assert event.stock_count_diff == event.new_stock_value - running
            running = event.new_stock_value
    assert StockLevel.objects.get().quantity == running
