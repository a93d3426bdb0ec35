"""core.bulk.insert (and insert_together, for rows of several tables) stores what bulk_create would store, in one
statement, and gives each object its id."""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any

import pytest
from django.db import DataError, connection
from django.forms.models import model_to_dict
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core import bulk
from exports.models import ExportDelivery, ExportItem, ExportQueue
from imports.models import ImportItem, ImportKind, ImportStatus

pytestmark = pytest.mark.django_db

ON_POSTGRES = pytest.mark.skipif(connection.vendor != "postgresql", reason="elsewhere bulk.insert is bulk_create")


def items(tenant, request_id: uuid.UUID, count: int = 3) -> list[ImportItem]:
    return [
        ImportItem(
            account=tenant.account,
            integration=tenant.integration,
            kind=ImportKind.INCOMING_ORDER,
            request_id=request_id,
            index=n,
            identifier=f"o-{n}",
            stock_location=tenant.stock_location if n % 2 else None,
            markets=["dk"] if n % 2 else [],
            payload={"order_identifier": f"o-{n}", "price": Decimal("149.95"), "name": 'Æble "Å"\n\\', "n": n},
            status=ImportStatus.PENDING if n % 2 else ImportStatus.REJECTED,
            errors=[] if n % 2 else [{"field": "basket", "message": "required", "code": "required"}],
        )
        for n in range(count)
    ]


def stored(request_id: uuid.UUID) -> list[dict[str, Any]]:
    rows = ImportItem.objects.filter(request_id=request_id).order_by("index")
    return [model_to_dict(row, exclude=["id", "request_id"]) for row in rows]


def test_the_rows_read_back_as_bulk_create_stores_them(tenant):
    by_bulk_create, by_insert = uuid.uuid4(), uuid.uuid4()
    ImportItem.objects.bulk_create(items(tenant, by_bulk_create))
    bulk.insert(items(tenant, by_insert))

    assert stored(by_insert) == stored(by_bulk_create)
    assert stored(by_insert)[0]["payload"]["price"] == Decimal("149.95")


def test_each_object_gets_the_id_of_its_row_and_its_creation_time(tenant):
    objs = items(tenant, uuid.uuid4(), count=5)

    assert bulk.insert(objs) == objs
    assert [obj.pk for obj in objs] == sorted(obj.pk for obj in objs)
    for obj in objs:
        row = ImportItem.objects.get(pk=obj.pk)
        assert (row.index, row.created_at) == (obj.index, obj.created_at)
        assert obj.created_at is not None and not obj._state.adding


def test_a_document_of_none_is_stored_as_null(tenant):
    objs = items(tenant, uuid.uuid4(), count=2)
    objs[0].payload = None

    bulk.insert(objs)

    assert list(ImportItem.objects.filter(payload__isnull=True).values_list("pk", flat=True)) == [objs[0].pk]


@ON_POSTGRES
def test_the_rows_are_one_statement(tenant):
    with CaptureQueriesContext(connection) as queries:
        bulk.insert(items(tenant, uuid.uuid4(), count=50))

    assert len(queries) == 1


@ON_POSTGRES
def test_a_value_too_long_for_its_column_is_refused_as_by_an_insert(tenant):
    objs = items(tenant, uuid.uuid4(), count=1)
    objs[0].kind = "x" * 33  # the column holds 32

    with pytest.raises(DataError):
        bulk.insert(objs)


def test_nothing_to_insert_is_no_statement(tenant):
    with CaptureQueriesContext(connection) as queries:
        assert bulk.insert([]) == []

    assert len(queries) == 0


def outbox_rows(tenant, count: int) -> tuple[list[ExportDelivery], list[ExportItem]]:
    """``count`` export items, every other one with a new delivery of its own (a real-time queue's way)."""
    queue = ExportQueue.objects.create(account=tenant.account, name="q", entity_type="sales")
    deliveries: list[ExportDelivery] = []
    rows: list[ExportItem] = []
    for n in range(count):
        item = ExportItem(account=tenant.account, queue=queue, entity_type="sales", object_id=n, element_key=f"s-{n}")
        if n % 2:
            item.delivery = ExportDelivery(
                account=tenant.account, queue=queue, delivery_id=f"msg_{n}", next_attempt_at=timezone.now()
            )
            deliveries.append(item.delivery)
        rows.append(item)
    return deliveries, rows


def test_rows_of_several_tables_each_get_their_id_and_name_the_new_rows_they_refer_to(tenant):
    deliveries, rows = outbox_rows(tenant, count=7)

    bulk.insert_together(deliveries, rows)

    stored_items = {item.pk: item for item in ExportItem.objects.filter(pk__in=[row.pk for row in rows])}
    assert len(stored_items) == 7
    for row in rows:
        item = stored_items[row.pk]
        assert (item.object_id, item.element_key, item.delivery_id) == (row.object_id, row.element_key, row.delivery_id)
        if row.object_id % 2:
            assert ExportDelivery.objects.get(pk=item.delivery_id).delivery_id == f"msg_{row.object_id}"
        else:
            assert item.delivery_id is None
    assert all(not obj._state.adding and obj.created_at is not None for obj in [*deliveries, *rows])


@ON_POSTGRES
def test_rows_of_several_tables_are_one_statement(tenant):
    deliveries, rows = outbox_rows(tenant, count=50)

    with CaptureQueriesContext(connection) as queries:
        bulk.insert_together(deliveries, rows)

    assert len(queries) == 1


def test_each_row_keeps_its_own_value_where_the_rows_differ_and_share_one_where_they_repeat(tenant):
    first, second = uuid.uuid4(), uuid.uuid4()
    objs = items(tenant, first, count=4)
    for n, obj in enumerate(objs):
        obj.request_id = first if n % 2 else second
        obj.processed_at = None if n == 3 else timezone.now()

    bulk.insert(objs)

    rows = {row.pk: row for row in ImportItem.objects.filter(pk__in=[o.pk for o in objs])}
    assert [rows[o.pk].request_id for o in objs] == [second, first, second, first]
    assert [rows[o.pk].processed_at for o in objs] == [o.processed_at for o in objs]
    assert [rows[o.pk].status for o in objs] == [o.status for o in objs]
