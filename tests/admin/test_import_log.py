"""The import log in the admin: a record to read, filter and search, never to edit."""

from __future__ import annotations

import html

from imports.models import ImportItem, ImportKind, ImportStatus
from tests.factories import ImportItemFactory, IntegrationFactory
from tests.support.admin import admin_url, listed


def item(tenant, **kwargs) -> ImportItem:
    return ImportItemFactory(account=tenant.account, integration=tenant.integration, **kwargs)


def test_import_log_offers_no_add(admin_client, tenant) -> None:
    assert admin_client.get(admin_url(ImportItem, "add")).status_code == 403


def test_import_log_refuses_a_post_to_change(admin_client, tenant) -> None:
    logged = item(tenant, status=ImportStatus.FAILURE, message="duplicate")

    response = admin_client.post(
        admin_url(ImportItem, "change", logged.pk), {"status": "success", "message": "", "identifier": "x"}
    )

    assert response.status_code == 403
    logged.refresh_from_db()
    assert (logged.status, logged.message) == (ImportStatus.FAILURE, "duplicate")


def test_import_log_cannot_be_deleted(admin_client, tenant) -> None:
    logged = item(tenant)

    assert admin_client.post(admin_url(ImportItem, "delete", logged.pk), {"post": "yes"}).status_code == 403
    assert ImportItem.objects.filter(pk=logged.pk).exists()


def test_detail_pretty_prints_payload_and_errors(admin_client, tenant) -> None:
    logged = item(
        tenant,
        payload={"order_identifier": "A-1", "basket": {"total": 10}},
        errors=[{"field": "basket.total", "message": "wrong"}],
        status=ImportStatus.REJECTED,
    )

    content = html.unescape(admin_client.get(admin_url(ImportItem, "change", logged.pk)).content.decode())

    assert '"basket": {\n    "total": 10\n  }' in content
    assert '[\n  {\n    "field": "basket.total",\n    "message": "wrong"\n  }\n]' in content


def test_import_log_filters_by_status(admin_client, tenant) -> None:
    failed = item(tenant, status=ImportStatus.FAILURE)
    item(tenant, status=ImportStatus.SUCCESS)

    rows = listed(admin_client.get(admin_url(ImportItem, "changelist"), {"status__exact": "failure"}))

    assert rows == [failed]


def test_import_log_filters_by_kind(admin_client, tenant) -> None:
    rule = item(tenant, kind=ImportKind.PRODUCT_RULE)
    item(tenant, kind=ImportKind.INCOMING_ORDER)

    rows = listed(admin_client.get(admin_url(ImportItem, "changelist"), {"kind__exact": "product_rule"}))

    assert rows == [rule]


def test_import_log_filters_by_integration(admin_client, tenant) -> None:
    other = IntegrationFactory(account=tenant.account, identifier="erp")
    from_erp = ImportItemFactory(account=tenant.account, integration=other)
    item(tenant)

    rows = listed(admin_client.get(admin_url(ImportItem, "changelist"), {"integration__id__exact": other.pk}))

    assert rows == [from_erp]


def test_import_log_filters_by_account(admin_client, tenant, other_tenant) -> None:
    item(tenant)
    theirs = item(other_tenant)

    rows = listed(
        admin_client.get(admin_url(ImportItem, "changelist"), {"account__id__exact": other_tenant.account.pk})
    )

    assert rows == [theirs]


def test_import_log_search_finds_by_identifier(admin_client, tenant) -> None:
    wanted = item(tenant, identifier="ORDER-4711")
    item(tenant, identifier="ORDER-1")

    assert listed(admin_client.get(admin_url(ImportItem, "changelist"), {"q": "4711"})) == [wanted]


def test_import_log_search_finds_a_whole_request_by_request_id(admin_client, tenant) -> None:
    first = item(tenant, index=0)
    second = item(tenant, index=1, request_id=first.request_id)
    item(tenant)

    rows = listed(admin_client.get(admin_url(ImportItem, "changelist"), {"q": str(first.request_id)}))

    assert set(rows) == {first, second}
