"""The back-office's register close statements: the list (newest first, by register, pages of 50) and one
statement (its facts, summaries, reconciliations and document); only the member's account."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from backoffice import documents, pages
from ledger.models import RegisterCloseStatement
from ledger.services.registers import close_register, open_register
from tests.factories import RegisterFactory, StockLocationFactory
from tests.support.api import PosApi
from tests.support.backoffice import SignIn, page_text
from tests.support.checkouts import checkout_body
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


def _day(tenant: Tenant, client: Any, register: str, *, sales: int = 1, identifier: str = "") -> RegisterCloseStatement:
    """A register day: opened, ``sales`` checkouts of 250.00 DKK paid by card, closed."""
    open_register(account=tenant.account, register_identifier=register)
    for n in range(sales):
        body = checkout_body(
            identifier=f"{register}-{identifier or 'day'}-{n}",
            register_id=register,
            lines=[("p-1", "tops", 1, "250.00")],
            sequence_number=n + 1,
        )
        assert PosApi(client, tenant).post("checkouts", body).status_code == 201
    counted = [{"payment_type_identifier": "cash", "counted": Decimal("0.00")}]
    return close_register(account=tenant.account, register_identifier=register, counted=counted, identifier=identifier)


@pytest.fixture
def closed(tenant: Tenant, other_tenant: Tenant, client: Any) -> dict[str, RegisterCloseStatement]:
    """Tenant: reg-1 in shop-1 closed with two sales, reg-2 in shop-2 closed with none; the other tenant: its own
    register closed."""
    RegisterFactory(account=tenant.account, stock_location=tenant.stock_location, identifier="reg-1")
    shop_2 = StockLocationFactory(account=tenant.account, market=tenant.market, identifier="shop-2")
    RegisterFactory(account=tenant.account, stock_location=shop_2, identifier="reg-2")
    RegisterFactory(account=other_tenant.account, stock_location=other_tenant.stock_location, identifier="reg-9")
    return {
        "one": _day(tenant, client, "reg-1", sales=2, identifier="close-one"),
        "two": _day(tenant, client, "reg-2", sales=0),
        "theirs": _day(other_tenant, client, "reg-9", identifier="globex-close"),
    }


def test_the_list_shows_the_accounts_statements_and_filters_by_register(
    closed: dict[str, RegisterCloseStatement], sign_in: SignIn, tenant: Tenant
) -> None:
    viewer = sign_in(tenant.account, "viewer")

    listed = page_text(viewer.get("/backoffice/statements/"))
    of_reg_2 = page_text(viewer.get("/backoffice/statements/", {"register": "reg-2"}))

    one, two = closed["one"], closed["two"]
    assert f"/backoffice/statements/{one.pk}/" in listed and f"/backoffice/statements/{two.pk}/" in listed
    assert "close-one" in listed and "shop-1" in listed and "shop-2" in listed
    assert one.document["register_summary"]["all"]["total"] == Decimal("500.00")
    assert ">500.00 DKK<" in listed and ">0.00 DKK<" in listed  # the two sales of reg-1; none at reg-2
    assert "globex-close" not in listed and f"/backoffice/statements/{closed['theirs'].pk}/" not in listed
    assert f"/backoffice/statements/{two.pk}/" in of_reg_2 and f"/backoffice/statements/{one.pk}/" not in of_reg_2
    assert 'href="/backoffice/statements/" aria-current="page"' in listed  # beside sales and checkouts


def test_a_statement_shows_its_facts_summaries_reconciliations_and_document(
    closed: dict[str, RegisterCloseStatement], sign_in: SignIn, tenant: Tenant
) -> None:
    one = closed["one"]
    viewer = sign_in(tenant.account, "viewer")

    page = page_text(viewer.get(f"/backoffice/statements/{one.pk}/"))

    assert "Statement #1 of reg-1" in page and "close-one" in page and "shop-1" in page
    assert page.count(">500.00<") >= 2  # the sales' total, in "everything" and "sales"
    assert "register_summary" in page  # the document in short
    for reconciliation in one.document["reconciliations"]:
        assert f">{reconciliation['payment_type_identifier']}<" in page


def test_another_accounts_statement_is_not_found(
    closed: dict[str, RegisterCloseStatement], sign_in: SignIn, tenant: Tenant
) -> None:
    viewer = sign_in(tenant.account, "viewer")

    assert viewer.get(f"/backoffice/statements/{closed['theirs'].pk}/").status_code == 404
    assert viewer.get("/backoffice/statements/999999999/").status_code == 404


def test_the_list_pages_by_fifty_newest_first(tenant: Tenant, client: Any, sign_in: SignIn) -> None:
    RegisterFactory(account=tenant.account, stock_location=tenant.stock_location, identifier="reg-1")
    made = [_day(tenant, client, "reg-1", sales=0) for _ in range(pages.PAGE_SIZE + 1)]
    viewer = sign_in(tenant.account, "viewer")

    first = page_text(viewer.get("/backoffice/statements/"))
    older = page_text(viewer.get("/backoffice/statements/", {"before": made[1].pk}))

    assert f"/backoffice/statements/{made[-1].pk}/" in first and f"/backoffice/statements/{made[0].pk}/" not in first
    assert f"before={made[1].pk}" in first
    assert f"/backoffice/statements/{made[0].pk}/" in older and f"/backoffice/statements/{made[1].pk}/" not in older


def test_a_statement_page_costs_the_same_queries_whatever_the_list(
    closed: dict[str, RegisterCloseStatement], sign_in: SignIn, tenant: Tenant, django_assert_max_num_queries: Any
) -> None:
    viewer = sign_in(tenant.account, "viewer")
    viewer.get("/backoffice/statements/")  # the session and membership read once

    with django_assert_max_num_queries(8):
        assert viewer.get("/backoffice/statements/").status_code == 200


@pytest.mark.parametrize(
    ("value", "currency", "shown"),
    [
        (Decimal("500.000000"), "DKK", "500.00"),
        (500, "DKK", "500.00"),
        ("500.5", "JPY", "501"),
        (Decimal("-12.5"), "DKK", "-12.50"),
        ("not a number", "DKK", "not a number"),
        (Decimal("1.5"), "XXX-unknown", "1.5"),
        (None, "DKK", ""),
    ],
)
def test_an_amount_reads_with_its_currencys_decimals_whatever_it_was_stored_with(
    value: Any, currency: str, shown: str
) -> None:
    assert documents.amount(value, currency) == shown


def test_a_quantity_reads_without_trailing_zeros() -> None:
    assert [documents.number(v) for v in (Decimal("2.000000"), 20, Decimal("1.50"), None)] == ["2", "20", "1.50", ""]
