"""The import pipeline with real processes: HTTP to a live server, materialisation in a real Celery worker."""

from __future__ import annotations

import json
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from typing import Any

import pytest

from imports import services as import_services
from imports.models import ImportItem, ImportKind, ImportStatus
from imports.tasks import sweep_pending_imports
from orders.models import IncomingOrder
from tests.support.imports import BATCH_SIZE, batch, post_orders
from tests.support.tenants import Tenant
from tests.support.waiting import wait_until
from tests.support.workers import CeleryWorkerProcess

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]

MATERIALISE_TIMEOUT_SECONDS = 60


def statuses(tenant: Tenant) -> Counter[str]:
    return Counter(ImportItem.objects.filter(account=tenant.account).values_list("status", flat=True))


def wait_until_none_pending(tenant: Tenant) -> Counter[str]:
    def settled() -> Counter[str] | None:
        counts = statuses(tenant)
        return counts if counts and not counts[ImportStatus.PENDING] else None

    try:
        return wait_until(settled, MATERIALISE_TIMEOUT_SECONDS, message="every import item to leave pending")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; import items by status: {dict(statuses(tenant))}") from None


def incoming_identifiers(tenant: Tenant) -> Counter[str]:
    return Counter(IncomingOrder.objects.filter(account=tenant.account).values_list("order_identifier", flat=True))


def test_posted_orders_are_materialised_by_the_worker_exactly_once(
    live_server: Any, tenant: Tenant, celery_worker_process: CeleryWorkerProcess
) -> None:
    orders = batch("first")

    response = post_orders(live_server, tenant, orders)

    assert response.status_code == 200, response.text
    assert response.json() == {"status": "OK", "message": f"Import of {BATCH_SIZE} order(s) initiated"}
    assert wait_until_none_pending(tenant) == {ImportStatus.SUCCESS: BATCH_SIZE}
    assert incoming_identifiers(tenant) == Counter(o["order_identifier"] for o in orders)


def test_posting_the_same_batch_again_creates_nothing_twice(
    live_server: Any, tenant: Tenant, celery_worker_process: CeleryWorkerProcess
) -> None:
    orders = batch("again")
    assert post_orders(live_server, tenant, orders).status_code == 200
    wait_until_none_pending(tenant)

    again = post_orders(live_server, tenant, orders)

    assert again.status_code == 400, again.text
    assert {error["code"] for failed in again.json()["failed"] for error in failed["errors"]} == {"duplicate"}
    assert wait_until_none_pending(tenant) == {ImportStatus.SUCCESS: BATCH_SIZE, ImportStatus.REJECTED: BATCH_SIZE}
    assert incoming_identifiers(tenant) == Counter(o["order_identifier"] for o in orders)


def test_the_same_batch_posted_concurrently_is_materialised_once(
    live_server: Any, tenant: Tenant, celery_worker_process: CeleryWorkerProcess
) -> None:
    # Both requests may pass the duplicate check before either commits; then the worker fails the
    # second item of each pair. Either way each order exists once and each identifier succeeded once.
    orders = batch("race")

    with ThreadPoolExecutor(max_workers=2) as pool:
        responses = list(pool.map(lambda _: post_orders(live_server, tenant, orders), range(2)))

    assert all(r.status_code in (200, 207, 400) for r in responses), [r.text for r in responses]
    counts = wait_until_none_pending(tenant)
    assert counts[ImportStatus.SUCCESS] == BATCH_SIZE
    assert counts[ImportStatus.FAILURE] + counts[ImportStatus.REJECTED] == BATCH_SIZE
    assert incoming_identifiers(tenant) == Counter(o["order_identifier"] for o in orders)


def test_the_sweeper_hands_stranded_pending_items_to_the_worker(
    tenant: Tenant, celery_worker_process: CeleryWorkerProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A lost hand-off (broker down, web process killed after commit) leaves items pending with no task.
    lost: list[list[int]] = []
    monkeypatch.setattr(import_services, "_hand_off", lambda account_id, item_ids: lost.append(item_ids))
    orders = batch("stranded", 5)
    outcome = import_services.queue_orders(
        account=tenant.account,
        integration=tenant.integration,
        kind=ImportKind.INCOMING_ORDER,
        stock_location=tenant.stock_location,
        # As the endpoint parses a body: numbers with a fraction as Decimal.
        items=json.loads(json.dumps(orders), parse_float=Decimal),
    )
    assert (outcome.accepted, outcome.failed) == (5, [])
    assert len(lost) == 1
    assert statuses(tenant) == {ImportStatus.PENDING: 5}

    # The worker runs with IMPORT_SWEEP_GRACE_SECONDS=0, so every pending item is stale at once.
    sweep_pending_imports.delay()

    assert wait_until_none_pending(tenant) == {ImportStatus.SUCCESS: 5}
    assert incoming_identifiers(tenant) == Counter(o["order_identifier"] for o in orders)


def test_batches_posted_at_once_are_all_materialised_by_concurrent_worker_processes(
    live_server: Any, tenant: Tenant, celery_worker_pool: CeleryWorkerProcess
) -> None:
    # Two worker processes materialise batches of one account at the same time. Neither may pass over
    # the other's items (as a lock on a shared joined row would make SKIP LOCKED do); a skipped item
    # would stay pending until the sweeper, which does not run here.
    batches = [batch(f"parallel-{n}", 10) for n in range(8)]

    with ThreadPoolExecutor(max_workers=4) as pool:
        responses = list(pool.map(lambda orders: post_orders(live_server, tenant, orders), batches))

    assert [r.status_code for r in responses] == [200] * len(batches)
    assert wait_until_none_pending(tenant) == {ImportStatus.SUCCESS: 80}
    assert sum(incoming_identifiers(tenant).values()) == 80
