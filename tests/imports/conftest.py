from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from rest_framework.test import APIClient

from config.celery import app as celery_app
from imports import services
from imports.models import ImportItem, ImportStatus
from tests.conftest import Tenant


def order(identifier: str = "o-1", **overrides: Any) -> dict[str, Any]:
    """A minimal valid incoming order (spec: Endpoints A rule 3) with overrides."""
    body: dict[str, Any] = {
        "order_identifier": identifier,
        "basket": {
            "currency": "DKK",
            "line_items": [{"product_identifier": "1001", "name": "T-shirt", "quantity": 2, "price": 149.95}],
        },
    }
    body.update(overrides)
    return body


def post(
    client: APIClient,
    tenant: Tenant,
    path: str,
    body: Any,
    *,
    raw: bytes | None = None,
    content_type: str = "application/json",
    key: str | None = None,
    **params: str,
) -> Any:
    data = raw if raw is not None else json.dumps(body)
    return client.generic("POST", f"/imports/{path}?{tenant.query(key, **params)}", data, content_type=content_type)


def materialise_pending(tenant: Tenant) -> int:
    """What the worker does with the hand-off's messages for the account's pending items: a task per message."""
    ids = list(
        ImportItem.objects.filter(account=tenant.account, status=ImportStatus.PENDING).values_list("id", flat=True)
    )
    chunk = services.MATERIALISE_CHUNK
    messages = [ids[start : start + chunk] for start in range(0, len(ids), chunk)]
    return sum(services.materialise_items(account_id=tenant.account.pk, item_ids=m) for m in messages)


@pytest.fixture
def eager_celery() -> Iterator[None]:
    """Run Celery tasks in-process (the real worker is covered by tests/e2e)."""
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = previous
