"""Opening and closing registers through the POS API, and reading statements (spec: Register close statement)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.urls import reverse

from accounts.models import Register
from exports.models import ExportItem, ExportQueue
from ledger.models import RegisterCloseStatement, RegisterPeriod, Sale
from tests.factories import RegisterFactory, StockLocationFactory
from tests.support.api import errors_of, results
from tests.support.statements import Line, Pay, SaleSpec, book_sale

D = Decimal
CASH_COUNT = {"payment_type_identifier": "cash", "counted": 100}


def close(pos: Any, body: Any, register_id: str = "reg-1") -> Any:
    return pos.post(f"registers/{register_id}/close", body)


def open_(pos: Any, body: Any, register_id: str = "reg-1") -> Any:
    return pos.post(f"registers/{register_id}/open", body)


def a_sale(tenant: Any, register: Register, *payments: Pay) -> Sale:
    pays = list(payments) or [Pay("cash", D("50.00"))]
    total = sum((p.amount for p in pays), D(0))
    spec = SaleSpec(lines=[Line("", D(1), total, total / 5)], payments=pays)
    return book_sale(tenant=tenant, register=register, spec=spec)


# --- Opening ------------------------------------------------------------------------------------------------


def test_opening_a_register_starts_period_one_with_the_cash_in_the_drawer(pos, register):
    response = open_(pos, {"cash_total_at_open": 1000.5})

    assert response.status_code == 201, response.json()
    assert response.json()["sequence_number"] == 1
    assert response.json()["register_id"] == "reg-1"
    assert RegisterPeriod.objects.get(register=register).cash_total_at_open == D("1000.5")


def test_opening_an_open_register_is_a_conflict(pos, register):
    open_(pos, {})

    response = open_(pos, {"cash_total_at_open": 10})

    assert response.status_code == 409
    assert RegisterPeriod.objects.filter(register=register).count() == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"cash_total_at_open": -1}, "cash_total_at_open"),
        ({"cash_total_at_open": "100"}, "cash_total_at_open"),
        ({"cash_total_at_open": 1.005}, "cash_total_at_open"),  # finer than the øre
        ([1], ""),
    ],
)
def test_opening_with_a_bad_body_is_refused_naming_the_field(pos, register, body, field):
    response = open_(pos, body)

    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == field
    assert not RegisterPeriod.objects.exists()


def test_opening_an_unknown_register_is_a_404(pos, tenant):
    assert open_(pos, {}, register_id="nope").status_code == 404


# --- Closing ------------------------------------------------------------------------------------------------


def test_closing_answers_the_statement_it_stored(pos, tenant, register):
    open_(pos, {"cash_total_at_open": 100})
    a_sale(tenant, register)

    response = close(pos, {"counted": [{"payment_type_identifier": "cash", "counted": 150}], "comment": "ok"})

    assert response.status_code == 201, response.json()
    body = response.json()
    stored = RegisterCloseStatement.objects.get()
    assert body["id"] == stored.pk
    assert body["register"] == "reg-1"
    assert body["stock_location"] == "shop-1"
    assert body["document"]["register_summary"]["id"] == "reg-1-1"
    assert body["document"]["reconciliations"][0]["total"] == 150.0
    assert body["document"]["comment"] == "ok"


def test_closing_a_register_that_is_not_open_is_a_conflict(pos, register):
    response = close(pos, {"counted": [CASH_COUNT]})

    assert response.status_code == 409
    assert response.json()["errors"][0]["code"] == "not_open"


def test_closing_twice_is_a_conflict_the_second_time(pos, register):
    open_(pos, {})
    assert close(pos, {"counted": [{"payment_type_identifier": "cash", "counted": 0}]}).status_code == 201

    assert close(pos, {"counted": [{"payment_type_identifier": "cash", "counted": 0}]}).status_code == 409
    assert RegisterCloseStatement.objects.count() == 1


def test_closing_another_accounts_register_is_a_404(pos, other_tenant):
    RegisterFactory(account=other_tenant.account, stock_location=other_tenant.stock_location, identifier="reg-1")

    assert close(pos, {"counted": [CASH_COUNT]}).status_code == 404


def test_an_empty_period_closes_with_zero_sums_and_the_opening_cash(pos, register):
    open_(pos, {"cash_total_at_open": 250})

    document = close(pos, {"counted": [{"payment_type_identifier": "cash", "counted": 250}]}).json()["document"]

    summary = document["register_summary"]
    assert summary["all"]["total"] == 0
    assert summary["all"]["count"] == 0
    assert summary["all"]["payments"] == []
    assert summary["all_by_product_group"] == {}
    assert [(r["payment_type_identifier"], r["total"]) for r in document["reconciliations"]] == [
        ("cash", 250.0),
        ("card.external", 0.0),
    ]


def test_the_cash_count_is_required_naming_the_field(pos, tenant, register):
    a_sale(tenant, register)

    response = close(pos, {"comment": "forgot"})

    assert response.status_code == 400
    assert errors_of(response) == {"counted": "required"}
    assert RegisterPeriod.objects.get(register=register).closed_at is None


def test_each_foreign_currency_taken_in_cash_must_be_counted(pos, tenant, register):
    a_sale(tenant, register, Pay("cash", D("74.50"), "EUR", D("10.00")))

    missing = close(pos, {"counted": [{"payment_type_identifier": "cash", "counted": 74.5}]})
    counted = close(
        pos,
        {
            "counted": [
                {"payment_type_identifier": "cash", "counted": 0, "currency_code": "DKK"},
                {"payment_type_identifier": "cash", "counted": 10, "currency_code": "EUR"},
            ]
        },
    )

    assert missing.status_code == 400
    assert "EUR" in missing.json()["errors"][0]["message"]
    assert counted.status_code == 201, counted.json()
    eur = counted.json()["document"]["reconciliations"][-1]
    assert (eur["currency_code"], eur["depositing"], eur["deposited_amount"]) == ("EUR", "automatic", 10.0)


def test_a_type_configured_as_reconciled_must_be_counted_and_its_count_is_kept(pos, tenant, register):
    register.payment_types = [{"identifier": "card.external", "should_be_reconciled": True}]
    register.save()
    a_sale(tenant, register, Pay("card.external", D("80.00")))

    missing = close(pos, {})
    response = close(pos, {"counted": [{"payment_type_identifier": "card.external", "counted": 75}]})

    assert missing.status_code == 400
    card = response.json()["document"]["reconciliations"][0]
    assert (card["total"], card["counted"], card["depositing"]) == (80.0, 75.0, "none")


def test_a_count_of_a_type_that_needs_no_reconciliation_is_ignored_counted_equals_total(pos, tenant, register):
    a_sale(tenant, register, Pay("card.external", D("80.00")))

    response = close(
        pos,
        {
            "counted": [
                {"payment_type_identifier": "cash", "counted": 0},
                {"payment_type_identifier": "card.external", "counted": 1},
            ]
        },
    )

    card = response.json()["document"]["reconciliations"][1]
    assert (card["payment_type_identifier"], card["counted"], card["total"]) == ("card.external", 80.0, 80.0)


@pytest.mark.parametrize(
    ("counted", "field", "code"),
    [
        (
            [{"payment_type_identifier": "mobilepay", "counted": 1}],
            "counted[0].payment_type_identifier",
            "unknown_payment_type",
        ),
        (
            [{"payment_type_identifier": "cash", "counted": 1, "currency_code": "EUR"}],
            "counted[0].payment_type_identifier",
            "unknown_payment_type",
        ),
        ([CASH_COUNT, CASH_COUNT], "counted[1]", "duplicate"),
        ([{"payment_type_identifier": "cash", "counted": -1}], "counted[0].counted", "out_of_range"),
        ([{"payment_type_identifier": "cash", "counted": 1.001}], "counted[0].counted", "precision"),
        ([{**CASH_COUNT, "deposited_amount": 101}], "counted[0].deposited_amount", "out_of_range"),
        ([{**CASH_COUNT, "deposited_amount": -1}], "counted[0].deposited_amount", "out_of_range"),
        ([{"payment_type_identifier": "cash"}], "counted[0].counted", "required"),
        ([{"counted": 1}], "counted[0].payment_type_identifier", "required"),
        ([{"payment_type_identifier": "cash", "counted": "100"}], "counted[0].counted", "invalid_type"),
        (
            [{"payment_type_identifier": "cash", "counted": 1, "currency_code": "XXQ"}],
            "counted[0].currency_code",
            "invalid_currency",
        ),
        ("cash", "counted", "invalid_type"),
    ],
)
def test_a_bad_count_is_refused_naming_the_field(pos, tenant, register, counted, field, code):
    a_sale(tenant, register)

    response = close(pos, {"counted": counted})

    assert response.status_code == 400, response.json()
    assert errors_of(response).get(field) == code, response.json()
    assert not RegisterCloseStatement.objects.exists()


def test_only_cash_in_the_base_currency_is_deposited_by_hand(pos, tenant, register):
    a_sale(tenant, register, Pay("card.external", D("80.00")))

    response = close(
        pos,
        {"counted": [CASH_COUNT, {"payment_type_identifier": "card.external", "counted": 80, "deposited_amount": 80}]},
    )

    assert response.status_code == 400
    assert errors_of(response) == {"counted[1].deposited_amount": "not_allowed"}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"counted": [CASH_COUNT], "event_counts": {"sale": -1}}, "event_counts.sale"),
        ({"counted": [CASH_COUNT], "event_counts": {"sale": 1.5}}, "event_counts.sale"),
        ({"counted": [CASH_COUNT], "event_counts": []}, "event_counts"),
        ({"counted": [CASH_COUNT], "comment": 5}, "comment"),
        ({"counted": [CASH_COUNT], "cashier": {"identifier": "c-1"}}, "cashier.display_name"),
        ('{"counted": [', "body"),
        ("[]", ""),
    ],
)
def test_a_bad_close_body_is_refused_not_a_500(pos, tenant, register, body, field):
    a_sale(tenant, register)

    response = close(pos, body)

    assert response.status_code == 400
    assert field in {e["field"] for e in response.json()["errors"]}


def test_unknown_fields_and_event_names_are_ignored(pos, tenant, register):
    open_(pos, {})

    response = close(
        pos,
        {"counted": [{**CASH_COUNT, "counted": 0, "note": "x"}], "color": "red", "event_counts": {"sale": 3, "fun": 1}},
    )

    assert response.status_code == 201, response.json()
    assert response.json()["document"]["register_summary"]["event_counts"] == {"sale": 3}


def test_a_unicode_comment_and_cashier_are_kept(pos, register):
    open_(pos, {})

    response = close(
        pos,
        {
            "counted": [{**CASH_COUNT, "counted": 0}],
            "comment": "Kassen manglede 2,50 kr — ærgerligt 🙈",
            "cashier": {"identifier": "c-7", "display_name": "ÆØ"},
        },
    )

    document = RegisterCloseStatement.objects.get(pk=response.json()["id"]).document
    assert document["comment"] == "Kassen manglede 2,50 kr — ærgerligt 🙈"
    assert (document["source"]["cashier_id"], document["source"]["cashier_name"]) == ("c-7", "ÆØ")


# --- Periods and sequence numbers ---------------------------------------------------------------------------


def test_a_sale_after_a_close_opens_the_next_period_with_what_was_left_in_the_drawer(pos, tenant, register):
    open_(pos, {"cash_total_at_open": 500})
    a_sale(tenant, register)
    close(pos, {"counted": [{"payment_type_identifier": "cash", "counted": 550, "deposited_amount": 400}]})

    a_sale(tenant, register)
    response = close(pos, {"counted": [{"payment_type_identifier": "cash", "counted": 200}]})

    document = response.json()["document"]
    assert document["sequence_number"] == 2
    assert document["register_summary"]["id"] == "reg-1-2"
    assert document["register_summary"]["cash_total_at_open"] == 150.0  # 550 counted - 400 deposited
    assert document["register_summary"]["all"]["count"] == 1  # only the second period's sale
    assert document["reconciliations"][0]["total"] == 200.0


def test_sequence_numbers_increase_per_register(pos, tenant, register):
    other = RegisterFactory(account=tenant.account, stock_location=tenant.stock_location, identifier="reg-2")
    for _ in range(2):
        open_(pos, {})
        close(pos, {"counted": [{**CASH_COUNT, "counted": 0}]})
    open_(pos, {}, register_id="reg-2")
    close(pos, {"counted": [{**CASH_COUNT, "counted": 0}]}, register_id="reg-2")

    assert list(
        RegisterCloseStatement.objects.filter(register=register)
        .order_by("id")
        .values_list("sequence_number", flat=True)
    ) == [1, 2]
    assert RegisterCloseStatement.objects.get(register=other).sequence_number == 1


def test_a_sale_booked_after_the_close_goes_into_the_next_period_never_the_closed_one(pos, tenant, register):
    a_sale(tenant, register)
    close(pos, {"counted": [{**CASH_COUNT, "counted": 50}]})
    closed = RegisterPeriod.objects.get(register=register)

    later = a_sale(tenant, register)

    assert later.period_id != closed.pk
    assert later.period.sequence_number == 2
    assert closed.sales.count() == 1


# --- Exports ------------------------------------------------------------------------------------------------


def test_closing_offers_the_statement_to_exports_keyed_register_and_sequence(pos, tenant, register):
    queue = ExportQueue.objects.create(
        account=tenant.account,
        name="statements daily",
        entity_type="register_close_statements",
        trigger="daily",
        transform={"type": "identity"},
        delivery={"type": "webhook", "url": "https://example.com/hook"},
    )
    open_(pos, {})

    statement_id = close(pos, {"counted": [{**CASH_COUNT, "counted": 0}]}).json()["id"]

    item = ExportItem.objects.get(queue=queue)
    assert (item.object_id, item.element_key) == (statement_id, "reg-1:1")


def test_a_refused_close_exports_nothing(pos, tenant, register):
    ExportQueue.objects.create(
        account=tenant.account,
        name="statements daily",
        entity_type="register_close_statements",
        trigger="daily",
        transform={"type": "identity"},
        delivery={"type": "webhook", "url": "https://example.com/hook"},
    )
    a_sale(tenant, register)

    close(pos, {})

    assert not ExportItem.objects.exists()


# --- Reading statements -------------------------------------------------------------------------------------


def _statements(tenant: Any, pos: Any) -> tuple[Register, Register]:
    shop_2 = StockLocationFactory(account=tenant.account, market=tenant.market, identifier="shop-2")
    reg_1 = Register.objects.get(identifier="reg-1")
    reg_2 = RegisterFactory(account=tenant.account, stock_location=shop_2, identifier="reg-2")
    for register_id in ("reg-1", "reg-1", "reg-2"):
        open_(pos, {}, register_id=register_id)
        close(pos, {"counted": [{**CASH_COUNT, "counted": 0}]}, register_id=register_id)
    return reg_1, reg_2


def test_statements_are_listed_newest_first_and_filtered_by_register_and_shop(api, pos, tenant, register):
    _statements(tenant, pos)

    everything = results(api.get("register-close-statements"))
    of_reg_1 = results(api.get("register-close-statements", register="reg-1"))
    of_shop_2 = results(api.get("register-close-statements", stock_location="shop-2"))

    assert [(s["register"], s["sequence_number"]) for s in everything] == [("reg-2", 1), ("reg-1", 2), ("reg-1", 1)]
    assert [s["sequence_number"] for s in of_reg_1] == [2, 1]
    assert [(s["register"], s["stock_location"]) for s in of_shop_2] == [("reg-2", "shop-2")]


def test_statements_are_paginated(api, pos, tenant, register):
    _statements(tenant, pos)

    page = api.get("register-close-statements", limit=2).json()

    assert page["count"] == 3
    assert len(page["results"]) == 2
    assert page["next"]


def test_a_statement_is_read_by_id_with_its_document(api, pos, register):
    open_(pos, {})
    statement_id = close(pos, {"counted": [{**CASH_COUNT, "counted": 0}]}).json()["id"]

    response = api.get(f"register-close-statements/{statement_id}")

    assert response.status_code == 200
    assert response.json()["document"]["source"]["register_id"] == "reg-1"


def test_another_accounts_statement_is_a_404_and_not_listed(api, client, other_tenant, register):
    from tests.support.api import PosApi

    RegisterFactory(account=other_tenant.account, stock_location=other_tenant.stock_location, identifier="reg-x")
    other_pos = PosApi(client, other_tenant)
    open_(other_pos, {}, register_id="reg-x")
    statement_id = close(other_pos, {"counted": [{**CASH_COUNT, "counted": 0}]}, register_id="reg-x").json()["id"]

    assert api.get(f"register-close-statements/{statement_id}").status_code == 404
    assert results(api.get("register-close-statements")) == []


@pytest.mark.parametrize("statement_id", ["abc", "99999999999999999999999", "0"])
def test_a_bad_statement_id_is_a_404(api, tenant, statement_id):
    assert api.get(f"register-close-statements/{statement_id}").status_code == 404


def test_statements_need_the_admin_scope(client, tenant):
    response = client.get(f"/api/v1/register-close-statements/?{tenant.query(tenant.pos_key)}")

    assert response.status_code == 403


# --- Admin ------------------------------------------------------------------------------------------------


def test_a_statement_is_shown_in_the_admin_but_never_changed_or_deleted(admin_client, pos, register):
    open_(pos, {})
    statement = RegisterCloseStatement.objects.get(
        pk=close(pos, {"counted": [{**CASH_COUNT, "counted": 0}]}).json()["id"]
    )

    page = admin_client.get(reverse("admin:ledger_registerclosestatement_change", args=[statement.pk]))
    changelist = admin_client.get(reverse("admin:ledger_registerclosestatement_changelist"))
    delete = admin_client.post(
        reverse("admin:ledger_registerclosestatement_delete", args=[statement.pk]), {"post": "yes"}
    )
    add = admin_client.get(reverse("admin:ledger_registerclosestatement_add"))

    assert page.status_code == 200
    assert "register_summary" in page.content.decode()
    assert changelist.status_code == 200
    assert (delete.status_code, add.status_code) == (403, 403)
    assert RegisterCloseStatement.objects.filter(pk=statement.pk).exists()


def test_register_periods_are_read_only_in_the_admin(admin_client, pos, register):
    open_(pos, {})
    period = RegisterPeriod.objects.get()

    change = admin_client.post(reverse("admin:ledger_registerperiod_change", args=[period.pk]), {"sequence_number": 9})

    assert change.status_code == 403
    assert admin_client.get(reverse("admin:ledger_registerperiod_changelist")).status_code == 200


def test_payment_types_are_edited_with_the_register_in_the_admin(admin_client, register):
    page = admin_client.get(reverse("admin:accounts_register_change", args=[register.pk]))

    assert page.status_code == 200
    assert 'name="payment_types"' in page.content.decode()


# --- Register payment types (back-office) -------------------------------------------------------------------


def test_a_new_register_has_cash_reconciled_and_external_cards_not(api, tenant):
    response = api.post("registers", {"identifier": "till-9", "stock_location": "shop-1"})

    assert response.status_code == 201, response.json()
    assert response.json()["payment_types"] == [
        {"identifier": "cash", "should_be_reconciled": True},
        {"identifier": "card.external", "should_be_reconciled": False},
    ]


def test_payment_types_can_be_configured_on_a_register(api, register):
    types = [
        {"identifier": "cash", "should_be_reconciled": True},
        {"identifier": "mobilepay", "should_be_reconciled": True},
    ]

    response = api.patch("registers/reg-1", {"payment_types": types})

    assert response.status_code == 200, response.json()
    register.refresh_from_db()
    assert register.payment_types == types


@pytest.mark.parametrize(
    "payment_types",
    [
        "cash",
        [{"identifier": "cash"}],
        [{"identifier": "", "should_be_reconciled": True}],
        [{"identifier": "cash.rounding", "should_be_reconciled": False}],
        [{"identifier": "cash", "should_be_reconciled": True}, {"identifier": "cash", "should_be_reconciled": False}],
        [{"identifier": "cash", "should_be_reconciled": "yes"}],
        [{"identifier": "cash", "should_be_reconciled": True, "colour": "red"}],
        [["cash", True]],
    ],
)
def test_bad_payment_types_are_refused(api, register, payment_types):
    response = api.patch("registers/reg-1", {"payment_types": payment_types})

    assert response.status_code == 400
    assert "payment_types" in {e["field"].split("[")[0] for e in response.json()["errors"]}


# --- Concurrency (PostgreSQL: SQLite has no row locks) --------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_close_waits_for_a_sale_being_booked_and_counts_it(tenant, register):
    from django.db import connection, connections, transaction

    if connection.vendor != "postgresql":
        pytest.skip("row locks are a PostgreSQL matter")
    from concurrent.futures import ThreadPoolExecutor
    from threading import Event

    from ledger.services.registers import close_register, open_period_for

    booked, release = Event(), Event()

    def book_and_hold() -> None:
        try:
            with transaction.atomic():
                open_period_for(account=tenant.account, register=register)  # locks the register
                book_sale(tenant=tenant, register=register, spec=SaleSpec(lines=[Line("", D(1), D(10), D(2))]))
                booked.set()
                assert release.wait(30)
        finally:
            connections.close_all()

    def close_it() -> RegisterCloseStatement:
        try:
            return close_register(
                account=tenant.account, register_identifier="reg-1", counted=[{**CASH_COUNT, "counted": 0}]
            )
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=2) as pool:
        holder = pool.submit(book_and_hold)
        assert booked.wait(30)
        closing = pool.submit(close_it)
        with connection.cursor() as cursor:  # await the close blocking on the register's lock
            for _ in range(3000):
                cursor.execute(
                    "SELECT count(*) FROM pg_stat_activity"
                    " WHERE wait_event_type = 'Lock' AND datname = current_database()"
                )
                if cursor.fetchone()[0] >= 1 or closing.done():
                    break
        assert not closing.done()
        release.set()
        holder.result(timeout=30)
        statement = closing.result(timeout=30)

    assert statement.document["register_summary"]["all"]["count"] == 1
