"""The raw ``INSERT ... SELECT`` statements that materialise imported orders (``orders.services.insert_orders_from``:
the orders, and the first state change of each incoming order) set only the columns they name. Every other
column of the model must have a database default (``db_default``), or be a nullable column without a default
(NULL, what the ORM would write too): a column added with only a Python default would make the INSERT fail
(NOT NULL) or store what the ORM would not."""

from __future__ import annotations

import re
from collections.abc import Iterable

import pytest
from django.db import connection, models
from django.db.models import NOT_PROVIDED
from django.test.utils import CaptureQueriesContext

from orders.models import ExternalOrder, IncomingOrder, OrderStateChange
from tests.support.imports import materialise_pending, order, post

pytestmark = pytest.mark.django_db

INSERT_SELECT = re.compile(r'INSERT INTO "?(\w+)"? \(([^)]*)\)\s*SELECT', re.IGNORECASE)


def columns_inserted(client, tenant) -> dict[str, set[str]]:
    """Per table, the columns of the INSERT ... SELECT statements that materialising an import runs."""
    post(client, tenant, "incoming_orders", {"orders": [order("in-1")]}, stock_location="shop-1")
    post(client, tenant, "external_orders", {"external_orders": [order("ex-1")]}, stock_location="shop-1")
    with CaptureQueriesContext(connection) as queries:
        assert materialise_pending(tenant) == 2
    found: dict[str, set[str]] = {}
    for query in queries.captured_queries:
        match = INSERT_SELECT.search(query["sql"])
        if match:
            found[match[1]] = {column.strip().strip('"') for column in match[2].split(",")}
    return found


def left_without_a_default(fields: Iterable[models.Field], inserted: set[str]) -> list[str]:
    """The fields whose column the INSERT leaves out and the database cannot fill as the ORM would."""
    return [
        field.name
        for field in fields
        if not field.primary_key
        and field.column not in inserted
        and field.db_default is NOT_PROVIDED
        and not (field.null and not field.has_default())
    ]


@pytest.mark.parametrize("model", [IncomingOrder, ExternalOrder, OrderStateChange])
def test_every_column_the_insert_leaves_out_has_a_database_default(client, tenant, model):
    inserted = columns_inserted(client, tenant)

    assert model._meta.db_table in inserted, "materialising no longer runs an INSERT ... SELECT for this model"
    assert left_without_a_default(model._meta.concrete_fields, inserted[model._meta.db_table]) == []
    assert model.objects.count() == 1


def test_a_column_left_out_without_a_database_default_is_found():
    every_column = {field.column for field in IncomingOrder._meta.concrete_fields}
    added = [
        models.BooleanField(name="flag", default=False),
        models.BooleanField(name="flag_in_db", db_default=False),
        models.CharField(name="note", null=True),
        models.CharField(name="label", null=True, default="x"),
    ]
    for field in added:
        field.set_attributes_from_name(field.name)

    assert left_without_a_default(IncomingOrder._meta.concrete_fields, every_column - {"currency"}) == ["currency"]
    assert left_without_a_default(added, every_column) == ["flag", "label"]
