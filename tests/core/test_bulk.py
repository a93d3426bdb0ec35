"""core.bulk.insert stores what bulk_create would store, in one statement, and gives each object its id."""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any

import pytest
from django.db import DataError, connection
from django.forms.models import model_to_dict
from django.test.utils import CaptureQueriesContext

from core import bulk
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
