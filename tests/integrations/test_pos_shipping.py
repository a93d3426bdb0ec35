"""``POST /api/v1/pos/shipping-options`` end to end against the reference integrator (spec: Shipping option)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.support.api import PosApi
from tests.support.integrations import SHIPPING_ADDRESS, SHIPPING_REQUEST
from tests.support.reference_server import ReferenceIntegrator

pytestmark = pytest.mark.django_db

Configure = Callable[..., Any]
ADDRESS = SHIPPING_ADDRESS
BODY = SHIPPING_REQUEST


def test_shipping_options_are_answered(pos: PosApi, configure: Configure) -> None:
    configure("shipping_options")

    response = pos.post("shipping-options", BODY)

    assert response.status_code == 200
    assert response.json()["results"] == [
        {"id": "gls", "price": 39, "title": "GLS", "subtitle": "1-2 business days"},
        {"id": "pickup", "price": 0, "title": "Pick up in shop", "subtitle": "Ready tomorrow"},
    ]


def test_the_address_shop_and_base_currency_are_sent(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("shipping_options")

    pos.post("shipping-options/", BODY)

    sent = reference.last("/shipping-options").body
    assert sent["shop_id"] == "shop-1"
    assert sent["currency_code"] == "DKK"
    assert sent["market"] == "dk"
    assert sent["address"] == {**ADDRESS, "email": "", "phone": ""}


def test_an_unknown_stock_location_is_refused(pos: PosApi, configure: Configure) -> None:
    configure("shipping_options")

    response = pos.post("shipping-options", {**BODY, "stock_location": "nope"})

    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "shop_id"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"address": ADDRESS}, "stock_location"),
        ({"stock_location": "shop-1"}, "address"),
        ({"stock_location": 1, "address": ADDRESS}, "stock_location"),
        ({"stock_location": "shop-1", "address": "Vestergade 1"}, "address"),
        ({"stock_location": "shop-1", "address": {"postal_code": 1456}}, "address.postal_code"),
        ([BODY], ""),
    ],
)
def test_a_bad_body_is_refused_naming_the_field(pos: PosApi, configure: Configure, body: Any, field: str) -> None:
    configure("shipping_options")

    response = pos.post("shipping-options", body)

    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == field


def test_truncated_json_is_refused(pos: PosApi, configure: Configure) -> None:
    configure("shipping_options")

    response = pos.post("shipping-options", '{"stock_location": "shop-1", "addr')

    assert response.status_code == 400
    assert response.json()["errors"][0]["code"] == "invalid_json"


def test_unknown_fields_are_ignored(pos: PosApi, configure: Configure) -> None:
    configure("shipping_options")

    response = pos.post("shipping-options", {**BODY, "basket_total": 100, "address": {**ADDRESS, "floor": "2"}})

    assert response.status_code == 200


def test_an_option_without_a_title_is_a_bad_answer(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("shipping_options")
    reference.script["/shipping-options"] = [(200, [{"id": "gls", "price": 39, "subtitle": ""}])]

    response = pos.post("shipping-options", BODY)

    assert response.status_code == 502
    assert response.json()["errors"][0]["field"] == "[0].title"


def test_an_option_price_as_text_is_a_bad_answer(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("shipping_options")
    reference.script["/shipping-options"] = [(200, [{"id": "gls", "price": "39", "title": "GLS", "subtitle": ""}])]

    response = pos.post("shipping-options", BODY)

    assert response.status_code == 502
    assert response.json()["errors"][0]["field"] == "[0].price"


def test_a_slow_integrator_is_a_504(pos: PosApi, configure: Configure, reference: ReferenceIntegrator) -> None:
    configure("shipping_options", timeout="0.2")
    reference.script["/shipping-options"] = [("sleep", 2)]

    response = pos.post("shipping-options", BODY)

    assert response.status_code == 504


def test_no_shipping_integration_is_a_404(pos: PosApi) -> None:
    response = pos.post("shipping-options", BODY)

    assert response.status_code == 404
    assert response.json()["errors"][0]["code"] == "not_configured"
