"""POS gift cards through the giftcard_* runtime integrations against the reference integrator (spec: Gift card
entity, Gift card status, Endpoints B): the life of a card, every local refusal, the integrator failing, and
that the service's record changes only once the integrator confirmed."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.admin.sites import site
from django.db import DatabaseError
from django.test import RequestFactory

from giftcards import selectors as giftcard_selectors
from giftcards.models import GiftCard, GiftCardMove, GiftCardStatus
from integrations import templates
from tests.support.api import PosApi, error_fields
from tests.support.integrations import pays_sent
from tests.support.races import missing_once
from tests.support.reference_server import ReferenceIntegrator
from tests.support.tenants import Tenant

KINDS = ("giftcard_create", "giftcard_activate", "giftcard_read", "giftcard_pay")


@pytest.fixture
def giftcards(configure: Callable[..., Any]) -> None:
    for kind in KINDS:
        configure(kind)


@pytest.fixture
def active(pos: PosApi, giftcards: None, reference: ReferenceIntegrator) -> str:
    """An active card ``GC-A`` of 500 DKK, known to the service (read once)."""
    reference.add_card("GC-A", amount=500)
    assert pos.get("giftcards/GC-A").status_code == 200
    return "GC-A"


def pay(pos: PosApi, code: str, amount: Any, **extra: Any) -> Any:
    return pos.post(f"giftcards/{code}/pay", {"amount": amount, "currency_code": "DKK", **extra})


def card(code: str) -> GiftCard:
    return GiftCard.objects.get(code=code)


# --- the life of a card ------------------------------------------------------------------------------------


def test_a_card_is_created_activated_read_paid_partly_and_used_up(
    pos: PosApi, giftcards: None, reference: ReferenceIntegrator, sell_giftcard: Callable[..., str]
) -> None:
    created = pos.post("giftcards", {"amount": 500, "currency_code": "DKK", "shop_id": "shop-1"})
    assert created.status_code == 201, created.json()
    code = created.json()["code"]
    assert created.json()["status"] == 1
    assert reference.last("/giftcards").body["shop_id"] == "shop-1"
    assert reference.last("/giftcards").body["market"] == "dk"

    sale_id = sell_giftcard(code)
    activated = pos.post(f"giftcards/{code}/activate", {"sale_id": sale_id})
    assert activated.status_code == 200, activated.json()
    assert activated.json()["status"] == 2
    sent = reference.last(f"/giftcards/{code}/activate").body
    assert sent["id"] == created.json()["id"] and sent["amount"] == 500 and sent["sale_id"] == sale_id

    assert pos.get(f"giftcards/{code}").json()["amount"] == 500

    first = pay(pos, code, 120.5, identifier="pay-1")
    assert first.status_code == 200, first.json()
    assert first.json()["amount"] == pytest.approx(379.5)
    assert first.json()["amount_used"] == pytest.approx(120.5)
    assert first.json()["status"] == 2

    last = pay(pos, code, 379.5, identifier="pay-2")
    assert last.status_code == 200, last.json()
    assert (last.json()["amount"], last.json()["status"]) == (0, 3)
    record = card(code)
    assert (record.amount, record.status, record.sale_id) == (Decimal(0), GiftCardStatus.USED, sale_id)
    actions = list(GiftCardMove.objects.filter(code=code).order_by("id").values_list("action", "ok"))
    assert actions == [
        ("create", True),
        ("activate", True),
        ("read", True),
        ("pay", True),
        ("pay", True),
    ]


def test_the_record_keeps_amounts_before_and_after_each_pay(pos: PosApi, active: str) -> None:
    pay(pos, active, 100)
    move = GiftCardMove.objects.get(action="pay")
    assert (move.amount_before, move.amount_after, move.requested_amount) == (Decimal(500), Decimal(400), Decimal(100))
    assert (move.status_before, move.status_after, move.integrator_status) == (2, 2, 2)


def test_the_card_is_used_when_the_balance_reaches_zero_even_if_the_integrator_says_active(
    pos: PosApi, active: str, reference: ReferenceIntegrator
) -> None:
    entity = {**reference.cards[active], "amount": 0, "status": 2}
    reference.script["/giftcards/{code}/pay"] = [(200, entity)]
    response = pay(pos, active, 500)
    assert response.json()["status"] == 3
    assert card(active).status == GiftCardStatus.USED
    assert GiftCardMove.objects.get(action="pay").integrator_status == 2


def test_reading_an_unknown_card_records_it_so_it_can_be_paid(
    pos: PosApi, giftcards: None, reference: ReferenceIntegrator
) -> None:
    reference.add_card("WEB-1", amount=250)
    response = pos.get("giftcards/WEB-1")
    assert response.status_code == 200
    assert card("WEB-1").amount == Decimal(250)
    assert pay(pos, "WEB-1", 50).status_code == 200


def test_paths_work_with_a_trailing_slash(pos: PosApi, active: str) -> None:
    assert pos.get(f"giftcards/{active}/").status_code == 200
    assert pos.post(f"giftcards/{active}/pay/", {"amount": 1, "currency_code": "DKK"}).status_code == 200


# --- activation ------------------------------------------------------------------------------------------


@pytest.fixture
def created(pos: PosApi, giftcards: None) -> str:
    response = pos.post("giftcards", {"amount": 500, "currency_code": "DKK"})
    assert response.status_code == 201
    code: str = response.json()["code"]
    return code


def test_the_activate_call_carries_the_details_of_the_inactive_card(
    pos: PosApi,
    giftcards: None,
    configure: Callable[..., Any],
    reference: ReferenceIntegrator,
    sell_giftcard: Callable[..., str],
) -> None:
    """Spec: Gift card status, "the activate call carries the details of the inactive card": its dates, its status
    and the integrator's private data, as the card was created, in the body and (as JSON text) in a header."""
    created = pos.post("giftcards", {"amount": 500, "currency_code": "DKK"}).json()
    body = {
        "card": {"id": "{id}", "code": "{code}", "amount": "{amount}", "currency_code": "{currency_code}"},
        "create_date": "{create_date}",
        "expiry_date": "{expiry_date}",
        "status": "{status}",
        "external_giftcard": "{external_giftcard}",
        "sale_id": "{sale_id}",
    }
    configure("giftcard_activate", body=body, headers={"X-Card-Data": "{external_giftcard}"})

    activated = pos.post(f"giftcards/{created['code']}/activate", {"sale_id": sell_giftcard(created["code"])})

    assert activated.status_code == 200, activated.json()
    call = reference.last(f"/giftcards/{created['code']}/activate")
    assert call.body["card"] == {key: created[key] for key in ("id", "code", "amount", "currency_code")}
    dates = (Decimal(str(created["create_date"])), Decimal(str(created["expiry_date"])))
    assert (call.body["create_date"], call.body["expiry_date"]) == dates
    assert call.body["status"] == 1
    assert call.body["external_giftcard"] == created["external_giftcard"] == {"issuer": "reference"}
    assert call.headers["x-card-data"] == '{"issuer":"reference"}'


def test_an_object_in_a_text_template_is_compact_ascii_json() -> None:
    """A header takes Latin-1 only: the integrator's private data goes into one as JSON text whatever it holds."""
    data = {"shop": "København 日本", "n": Decimal("1.50")}

    rendered = templates.render("{external_giftcard}", {"external_giftcard": data})

    assert rendered == '{"shop":"K\\u00f8benhavn \\u65e5\\u672c","n":1.5}'
    assert rendered.isascii()


def test_activation_needs_a_stored_sale(pos: PosApi, created: str) -> None:
    response = pos.post(f"giftcards/{created}/activate", {"sale_id": "no-such-sale"})
    assert response.status_code == 400
    assert response.json()["errors"][0]["code"] == "sale_not_paid"
    assert card(created).status == GiftCardStatus.CREATED


def test_activation_refuses_a_voided_sale(pos: PosApi, created: str, sell_giftcard: Callable[..., str]) -> None:
    sale_id = sell_giftcard(created, voided=True)
    response = pos.post(f"giftcards/{created}/activate", {"sale_id": sale_id})
    assert response.status_code == 400
    assert card(created).status == GiftCardStatus.CREATED


def test_activation_refuses_a_sale_that_does_not_sell_the_card(
    pos: PosApi, created: str, sell_giftcard: Callable[..., str], reference: ReferenceIntegrator
) -> None:
    sale_id = sell_giftcard("ANOTHER-CARD")
    response = pos.post(f"giftcards/{created}/activate", {"sale_id": sale_id})
    assert response.status_code == 400
    assert response.json()["errors"][0]["code"] == "giftcard_not_in_sale"
    assert not [r for r in reference.requests if r.path.endswith("/activate")]


def test_activating_again_for_the_same_sale_answers_the_active_card(
    pos: PosApi, created: str, sell_giftcard: Callable[..., str], reference: ReferenceIntegrator
) -> None:
    sale_id = sell_giftcard(created)
    pos.post(f"giftcards/{created}/activate", {"sale_id": sale_id})
    again = pos.post(f"giftcards/{created}/activate", {"sale_id": sale_id})
    assert again.status_code == 200 and again.json()["status"] == 2
    assert len([r for r in reference.requests if r.path.endswith("/activate")]) == 1


def test_an_active_card_cannot_be_activated_for_another_sale(
    pos: PosApi, created: str, sell_giftcard: Callable[..., str]
) -> None:
    pos.post(f"giftcards/{created}/activate", {"sale_id": sell_giftcard(created)})
    other = sell_giftcard(created, identifier="co-gc-2")
    assert pos.post(f"giftcards/{created}/activate", {"sale_id": other}).status_code == 409


def test_activating_an_unknown_card_is_404(pos: PosApi, giftcards: None) -> None:
    assert pos.post("giftcards/NOPE/activate", {"sale_id": "s"}).status_code == 404


# --- local refusals of a pay (the integrator is never asked) -----------------------------------------------


def test_paying_with_an_unknown_card_is_refused_before_asking(
    pos: PosApi, giftcards: None, reference: ReferenceIntegrator
) -> None:
    response = pay(pos, "NEVER-SEEN", 10)
    assert response.status_code == 404
    assert response.json()["errors"][0]["code"] == "unknown_giftcard"
    assert pays_sent(reference) == 0


def test_paying_with_an_inactive_card_is_refused(pos: PosApi, created: str, reference: ReferenceIntegrator) -> None:
    response = pay(pos, created, 10)
    assert (response.status_code, response.json()["errors"][0]["code"]) == (409, "giftcard_inactive")
    assert pays_sent(reference) == 0


def test_paying_with_a_used_card_is_refused(pos: PosApi, active: str, reference: ReferenceIntegrator) -> None:
    pay(pos, active, 500)
    response = pay(pos, active, 1)
    assert (response.status_code, response.json()["errors"][0]["code"]) == (409, "giftcard_used")
    assert pays_sent(reference) == 1


def test_paying_with_an_expired_card_is_refused(pos: PosApi, giftcards: None, reference: ReferenceIntegrator) -> None:
    reference.add_card("OLD", amount=100, expiry_date=time.time() - 60)
    pos.get("giftcards/OLD")
    response = pay(pos, "OLD", 10)
    assert (response.status_code, response.json()["errors"][0]["code"]) == (409, "giftcard_expired")
    assert pays_sent(reference) == 0


def test_paying_in_another_currency_is_refused(pos: PosApi, active: str, reference: ReferenceIntegrator) -> None:
    response = pos.post(f"giftcards/{active}/pay", {"amount": 10, "currency_code": "EUR"})
    assert response.status_code == 400
    assert response.json()["errors"][0]["code"] == "wrong_currency"
    assert pays_sent(reference) == 0


def test_paying_more_than_the_balance_is_refused(pos: PosApi, active: str, reference: ReferenceIntegrator) -> None:
    response = pay(pos, active, 500.01)
    assert (response.status_code, response.json()["errors"][0]["code"]) == (400, "insufficient_balance")
    assert pays_sent(reference) == 0


@pytest.mark.parametrize("amount", [0, -5])
def test_paying_nothing_or_less_is_refused(pos: PosApi, active: str, amount: int) -> None:
    response = pay(pos, active, amount)
    assert response.status_code == 400
    assert error_fields(response) == {"amount"}


def test_an_amount_finer_than_the_currency_is_refused(pos: PosApi, active: str) -> None:
    response = pay(pos, active, 10.005)
    assert response.status_code == 400
    assert response.json()["errors"][0]["code"] == "invalid_amount"


# --- bad input never gives a 500 -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({"currency_code": "DKK"}, {"amount"}),
        ({"amount": "ten", "currency_code": "DKK"}, {"amount"}),
        ({"amount": True, "currency_code": "DKK"}, {"amount"}),
        ({"amount": 10, "currency_code": "XXY"}, {"currency_code"}),
        ({"amount": 10, "currency_code": "DKK", "shop_id": ["x"]}, {"shop_id"}),
        ([1, 2], {""}),
    ],
)
def test_a_wrong_create_body_is_a_400_naming_the_field(
    pos: PosApi, giftcards: None, body: Any, fields: set[str]
) -> None:
    response = pos.post("giftcards", body)
    assert response.status_code == 400
    assert error_fields(response) == fields


def test_truncated_json_is_a_400(pos: PosApi, giftcards: None) -> None:
    response = pos.post("giftcards", '{"amount": 10, "curr')
    assert response.status_code == 400
    assert response.json()["errors"][0]["code"] == "invalid_json"


def test_unknown_fields_are_ignored(pos: PosApi, giftcards: None) -> None:
    response = pos.post("giftcards", {"amount": 10, "currency_code": "DKK", "colour": "gold"})
    assert response.status_code == 201


def test_an_unknown_shop_is_refused(pos: PosApi, giftcards: None, reference: ReferenceIntegrator) -> None:
    response = pos.post("giftcards", {"amount": 10, "currency_code": "DKK", "shop_id": "nowhere"})
    assert response.status_code == 400 and error_fields(response) == {"shop_id"}
    assert not reference.requests


def test_a_unicode_code_is_passed_through(pos: PosApi, giftcards: None, reference: ReferenceIntegrator) -> None:
    reference.add_card("GAVEKORT-ÆØÅ-☃", amount=10)
    response = pos.get("giftcards/GAVEKORT-ÆØÅ-☃")
    assert response.status_code == 200
    assert response.json()["code"] == "GAVEKORT-ÆØÅ-☃"


# --- idempotency -----------------------------------------------------------------------------------------


def test_a_repeated_pay_identifier_answers_the_first_result_without_paying_twice(
    pos: PosApi, active: str, reference: ReferenceIntegrator
) -> None:
    first = pay(pos, active, 100, identifier="pay-1")
    pay(pos, active, 50)
    again = pay(pos, active, 100, identifier="pay-1")
    assert again.status_code == 200
    assert again.json()["replayed"] is True
    assert again.json()["amount"] == first.json()["amount"] == 400
    assert pays_sent(reference) == 2
    assert reference.cards[active]["amount"] == 350


def test_a_retry_that_passes_the_identifier_check_in_a_race_replays_the_first_pay(
    pos: PosApi, active: str, reference: ReferenceIntegrator, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = pay(pos, active, 100, identifier="pay-1")
    monkeypatch.setattr(
        giftcard_selectors, "pay_move_by_identifier", missing_once(giftcard_selectors.pay_move_by_identifier)
    )
    again = pay(pos, active, 100, identifier="pay-1")
    assert again.status_code == 200, again.json()
    assert again.json()["replayed"] is True and again.json()["amount"] == first.json()["amount"]
    assert pays_sent(reference) == 1
    assert GiftCardMove.objects.filter(identifier="pay-1").count() == 1


def test_a_pay_identifier_reused_for_another_amount_is_a_409(pos: PosApi, active: str) -> None:
    pay(pos, active, 100, identifier="pay-1")
    response = pay(pos, active, 99, identifier="pay-1")
    assert response.status_code == 409
    assert response.json()["errors"][0]["code"] == "reused"


def test_a_failed_pay_frees_its_identifier_for_a_retry(
    pos: PosApi, active: str, reference: ReferenceIntegrator
) -> None:
    reference.script["/giftcards/{code}/pay"] = [(503, {"error": "maintenance"})]
    assert pay(pos, active, 100, identifier="pay-1").status_code == 502
    retry = pay(pos, active, 100, identifier="pay-1")
    assert retry.status_code == 200 and retry.json()["replayed"] is False
    assert card(active).amount == Decimal(400)


# --- the integrator failing: 502/504 and no local change ---------------------------------------------------


@pytest.mark.parametrize(
    "entry",
    [
        (503, {"error": "down"}),
        (402, {"error": "insufficient balance"}),
        ("close", None),
        ("html", "<html><body>Login</body></html>"),
        ("garbage", b'{"amount": 10'),
        (200, {"amount": 400, "code": "GC-A"}),  # the wrong shape: most fields missing
        (
            200,
            {
                **{"amount": 400, "create_date": 1, "currency_code": "DKK", "expiry_date": 2},
                "id": "x",
                "status": 2,
                "code": "OTHER",
            },
        ),
    ],
)
def test_a_failing_integrator_is_a_502_and_the_card_is_unchanged(
    pos: PosApi, active: str, reference: ReferenceIntegrator, entry: Any
) -> None:
    reference.script["/giftcards/{code}/pay"] = [entry]
    response = pay(pos, active, 100)
    assert response.status_code == 502, response.json()
    assert response.json()["status"] == "ERROR"
    record = card(active)
    assert (record.amount, record.status) == (Decimal(500), GiftCardStatus.ACTIVE)
    assert not GiftCardMove.objects.filter(action="pay", ok=True).exists()


def test_a_slow_integrator_is_a_504_and_the_outcome_stays_unknown(
    pos: PosApi, active: str, reference: ReferenceIntegrator, configure: Callable[..., Any]
) -> None:
    configure("giftcard_pay", timeout="0.3")
    reference.script["/giftcards/{code}/pay"] = [("sleep", 2)]
    response = pay(pos, active, 100, identifier="pay-1")
    assert response.status_code == 504
    assert "may have been made" in response.json()["message"]
    assert card(active).amount == Decimal(500)
    # The identifier stays taken: a retry with it must not pay a second time.
    retry = pay(pos, active, 100, identifier="pay-1")
    assert (retry.status_code, retry.json()["errors"][0]["code"]) == (409, "payment_pending")


def test_a_pay_the_pos_budget_left_no_time_for_is_a_504_and_a_certain_failure(
    pos: PosApi, active: str, reference: ReferenceIntegrator, settings: Any
) -> None:
    settings.POS_INTEGRATION_BUDGET_SECONDS = 0.05  # less than any call may be given: the pay is not sent
    response = pay(pos, active, 100, identifier="pay-1")
    assert response.status_code == 504
    assert response.json()["message"].startswith("not called")
    assert not [r for r in reference.requests if r.path.endswith("/pay")]
    # Nothing reached the integrator: the payment certainly did not happen, it is not left pending.
    assert GiftCardMove.objects.get(action="pay").ok is False


def test_a_create_answer_not_in_status_1_is_a_502_and_nothing_is_stored(
    pos: PosApi, giftcards: None, reference: ReferenceIntegrator
) -> None:
    reference.script["/giftcards"] = [(200, {**reference.add_card("GC-X"), "status": 2})]
    response = pos.post("giftcards", {"amount": 10, "currency_code": "DKK"})
    assert response.status_code == 502
    assert not GiftCard.objects.exists()


def test_an_unconfigured_kind_is_a_404(pos: PosApi, configure: Callable[..., Any]) -> None:
    configure("giftcard_read")
    response = pos.post("giftcards", {"amount": 10, "currency_code": "DKK"})
    assert response.status_code == 404
    assert response.json()["errors"][0]["code"] == "not_configured"


def test_a_confirmed_pay_that_cannot_be_recorded_is_an_error_carrying_the_answer(
    pos: PosApi, active: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken_save(self: GiftCard, *args: Any, **kwargs: Any) -> None:
        raise DatabaseError("disk full")

    monkeypatch.setattr(GiftCard, "save", broken_save)
    with caplog.at_level(logging.CRITICAL, logger="giftcards.services"):
        response = pay(pos, active, 100, identifier="pay-1")
    assert response.status_code == 500
    assert response.json()["errors"][0]["code"] == "not_recorded"
    assert response.json()["integrator_answer"]["amount"] == 400
    assert any("NOT RECORDED" in r.getMessage() for r in caplog.records if r.levelno == logging.CRITICAL)
    monkeypatch.undo()
    assert card(active).amount == Decimal(500)
    assert pay(pos, active, 100, identifier="pay-1").status_code == 409  # never paid twice


# --- scoping and admin -----------------------------------------------------------------------------------


def test_another_accounts_card_is_unknown(
    pos: PosApi, active: str, other_tenant: Tenant, client: Any, configure: Callable[..., Any]
) -> None:
    for kind in KINDS:
        configure(kind, account=other_tenant.account)
    other = PosApi(client, other_tenant)
    response = pay(other, active, 10)
    assert response.status_code == 404


def test_the_admin_shows_cards_and_moves_read_only(active: str, admin_user: Any) -> None:
    request = RequestFactory().get("/admin/")
    request.user = admin_user
    for model in (GiftCard, GiftCardMove):
        model_admin = site._registry[model]
        assert not model_admin.has_add_permission(request)
        assert not model_admin.has_change_permission(request, model.objects.first())
        assert not model_admin.has_delete_permission(request, model.objects.first())


def test_the_admin_change_page_renders(active: str, admin_client: Any) -> None:
    response = admin_client.get(f"/admin/giftcards/giftcard/{card(active).pk}/change/")
    assert response.status_code == 200
    assert "GC-A" in response.content.decode()


def test_the_admin_shows_the_integrators_answer_of_a_move_indented(active: str, admin_client: Any) -> None:
    move = GiftCardMove.objects.get(code=active)
    response = admin_client.get(f"/admin/giftcards/giftcardmove/{move.pk}/change/")
    page = response.content.decode()
    assert response.status_code == 200
    assert "<label>Integrator&#x27;s answer:</label>" in page
    assert '<pre class="pretty-json">{\n  &quot;' in page
