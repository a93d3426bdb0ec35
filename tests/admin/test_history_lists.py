"""The lists of the tables that only grow cost the same with years of history: no COUNT(*) of the whole table,
no exact count of a long list on PostgreSQL, no date drill-down reading every row's date."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib import admin
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from accounts.admin import ReadOnlyAdminMixin
from core import paginators
from imports.models import ImportItem
from tests.factories import ImportItemFactory
from tests.support.admin import admin_url
from tests.support.tenants import Tenant

POSTGRESQL = connection.vendor == "postgresql"


def counts(queries: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in queries.captured_queries if "COUNT(" in q["sql"].upper()]


def test_every_record_list_estimates_its_count_and_has_no_date_drill_down() -> None:
    records = [a for a in admin.site._registry.values() if isinstance(a, ReadOnlyAdminMixin)]
    assert len(records) >= 10  # import log, orders, state changes, export log and deliveries, calls, sales, ...
    for model_admin in records:
        assert model_admin.paginator is paginators.EstimatedCountPaginator, model_admin
        assert model_admin.show_full_result_count is False, model_admin
        assert not model_admin.date_hierarchy, model_admin


def import_log_page(client: Client, **filters: str) -> tuple[Any, list[str]]:
    """The import log's first page (its change list) and the counting statements it ran."""
    with CaptureQueriesContext(connection) as queries:
        response = client.get(admin_url(ImportItem, "changelist"), filters)
    return response.context["cl"], counts(queries)


@pytest.mark.django_db
def test_a_short_list_is_counted_exactly(admin_client: Client, tenant: Tenant) -> None:
    ImportItemFactory.create_batch(3, account=tenant.account, integration=tenant.integration)
    changelist, counted = import_log_page(admin_client)
    assert changelist.result_count == 3
    assert not changelist.paginator.estimated
    # Only the filtered list is counted (never the whole table beside it), and on SQLite it is counted at any size.
    assert len(counted) == 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("filters", "rows"),
    [
        ({}, ImportItem.objects.all),
        ({"status__exact": "rejected"}, lambda: ImportItem.objects.filter(status="rejected")),
    ],
)
def test_a_long_list_takes_the_planners_estimate_of_its_own_rows_on_postgresql(
    admin_client: Client,
    tenant: Tenant,
    monkeypatch: pytest.MonkeyPatch,
    filters: dict[str, str],
    rows: Callable[[], Any],
) -> None:
    ImportItemFactory.create_batch(30, account=tenant.account, integration=tenant.integration)
    monkeypatch.setattr(paginators, "EXACT_COUNT_LIMIT", 0)  # every list is long
    changelist, counted = import_log_page(admin_client, **filters)
    exact = rows().count()
    assert len(changelist.result_list) == min(exact, 100)  # the page itself is listed
    if POSTGRESQL:
        assert changelist.paginator.estimated
        assert changelist.result_count == paginators.planner_rows(rows())
        assert counted == []
    else:  # SQLite gives no estimate: the count stays exact
        assert not changelist.paginator.estimated
        assert changelist.result_count == exact
        assert len(counted) == 1
