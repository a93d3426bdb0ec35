"""Products through /api/v1/products/ (spec: Product) and the product edit events every change emits."""

from __future__ import annotations

import time
from decimal import Decimal

import pytest

from exports.models import ExportItem, ExportQueue
from ledger.models import Product, ProductEditEvent
from tests.factories import MarketFactory
from tests.support.api import AdminApi, error_fields, results
from tests.support.products import create, events, product_body, raw
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


# --- Create ------------------------------------------------------------------------------------------------


def test_create_answers_the_spec_product_without_absent_fields(api) -> None:
    body = create(api, barcode=..., product_group=..., taxes=...)

    assert {k: v for k, v in body.items() if k not in ("created_at", "updated_at")} == {
        "id": "tshirt.basic.black",
        "name": {"da": "T-shirt, sort", "en": "T-shirt, black"},
        "retail_price": {"dk": 199.95},
        "cost_price": 60.5,
    }


def test_create_keeps_prices_as_exact_decimals(api, tenant) -> None:
    create(api, retail_price={"dk": 19.99}, cost_price=0.1)

    product = Product.objects.get(account=tenant.account)
    assert product.retail_price == {"dk": Decimal("19.99")}
    assert product.cost_price == Decimal("0.1")


def test_create_emits_a_create_event_with_the_whole_product(api, tenant) -> None:
    create(api)

    [event] = events(tenant)
    assert event["event"] == "create"
    assert event["account"] == "acme"
    assert event["product"]["id"] == "tshirt.basic.black"
    assert event["product"]["retail_price"] == {"dk": Decimal("199.95")}
    assert event["product"]["taxes"] == [{"name": "VAT", "rate": Decimal("0.25"), "type": "vat"}]
    assert abs(event["timestamp"] - Decimal(time.time())) < 60
    assert "changed" not in event


def test_each_product_event_is_enqueued_for_the_product_edit_event_queues(api, tenant) -> None:
    queue = ExportQueue.objects.create(
        account=tenant.account,
        name="products to erp",
        entity_type="product_edit_events",
        trigger="hourly",
        transform={"type": "identity"},
        delivery={"type": "webhook", "url": "https://erp.example.com/hook"},
    )

    create(api)
    api.patch("products/tshirt.basic.black", {"barcode": "123"})
    api.delete("products/tshirt.basic.black")

    ids = list(ProductEditEvent.objects.filter(account=tenant.account).order_by("id").values_list("pk", flat=True))
    items = ExportItem.objects.filter(queue=queue).order_by("id")
    assert [(i.object_id, i.element_key) for i in items] == [(pk, f"tshirt.basic.black:{pk}") for pk in ids]


def test_a_product_with_a_plain_string_name_and_no_price_is_variable_price(api) -> None:
    body = create(api, name="Gift wrapping", retail_price=...)

    assert body["name"] == "Gift wrapping"
    assert "retail_price" not in body


def test_an_empty_tax_list_is_kept_apart_from_absent_taxes(api) -> None:
    assert create(api, taxes=[])["taxes"] == []


def test_a_duplicate_id_is_refused_naming_id(api, tenant) -> None:
    create(api)

    response = api.post("products", product_body(name="Other"))

    assert response.status_code == 400
    assert response.json()["errors"][0]["code"] == "duplicate"
    assert error_fields(response) == {"id"}
    assert len(events(tenant)) == 1


def test_the_same_id_may_exist_in_another_account(api, other_tenant) -> None:
    AdminApi(api.client, other_tenant).post("products", product_body())

    create(api)


def test_a_market_price_naming_an_unknown_market_is_refused(api, tenant) -> None:
    response = api.post("products", product_body(retail_price={"dk": 10, "se": 12}))

    assert response.status_code == 400
    assert error_fields(response) == {"retail_price.se"}
    assert not Product.objects.exists()
    assert events(tenant) == []


def test_a_market_price_naming_a_market_of_another_account_is_refused(api, other_tenant) -> None:
    MarketFactory(account=other_tenant.account, identifier="no", currency="NOK")

    response = api.post("products", product_body(retail_price={"no": 10}))

    assert error_fields(response) == {"retail_price.no"}


def test_a_market_price_naming_several_markets_of_the_account_is_accepted(api, tenant) -> None:
    MarketFactory(account=tenant.account, identifier="se", currency="SEK")

    assert create(api, retail_price={"dk": 10, "se": 14.5})["retail_price"] == {"dk": 10, "se": 14.5}


# --- Validation --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"id": ...}, "id"),
        ({"name": ...}, "name"),
        ({"id": 12}, "id"),
        ({"id": "a/b"}, "id"),
        ({"id": " "}, "id"),
        ({"name": ["x"]}, "name"),
        ({"name": {}}, "name"),
        ({"name": {"da": 5}}, "name.da"),
        ({"retail_price": "12"}, "retail_price"),
        ({"retail_price": {"dk": -1}}, "retail_price.dk"),
        ({"retail_price": {}}, "retail_price"),
        ({"retail_price": True}, "retail_price"),
        ({"cost_price": 1.1234567}, "cost_price"),
        ({"cost_price": -3}, "cost_price"),
        ({"taxes": {"name": "VAT"}}, "taxes"),
        ({"taxes": [{"name": "VAT", "rate": 25, "type": "vat"}]}, "taxes[0].rate"),
        ({"taxes": [{"name": "VAT", "rate": 0.25, "type": "gst"}]}, "taxes[0].type"),
        ({"taxes": [{"rate": 0.25, "type": "vat"}]}, "taxes[0].name"),
        ({"image_url": "ftp://x/y.png"}, "image_url"),
        ({"barcode": 5701234567890}, "barcode"),
        ({"product_group": "x" * 256}, "product_group"),
        ({"description": {"da": "\x00"}}, "description.da"),
    ],
)
def test_invalid_fields_are_refused_by_name(api, tenant, overrides, field) -> None:
    response = api.post("products", product_body(**overrides))

    assert response.status_code == 400
    assert response.json()["status"] == "ERROR"
    assert field in error_fields(response)
    assert not Product.objects.exists()


def test_every_invalid_field_is_reported_at_once(api) -> None:
    response = api.post("products", product_body(name=1, cost_price="1"))

    assert error_fields(response) == {"name", "cost_price"}


def test_unknown_fields_are_ignored(api) -> None:
    body = create(api, colour="black", variants=[{"id": "m"}])

    assert "colour" not in body


def test_unicode_names_are_kept(api) -> None:
    assert create(api, name={"da": "Æblemost 🍏", "ja": "りんご"})["name"] == {"da": "Æblemost 🍏", "ja": "りんご"}


@pytest.mark.parametrize("data", ['{"id": "a", "name": ', "[1, 2]", '"text"', "", "NaN"])
def test_a_body_that_is_not_a_json_object_is_refused(api, data) -> None:
    response = raw(api, "post", "products", data)

    assert response.status_code == 400
    assert response.json()["status"] == "ERROR"


# --- Read and search ------------------------------------------------------------------------------------


def test_a_product_id_with_dots_addresses_the_product(api) -> None:
    create(api)

    response = api.get("products/tshirt.basic.black")

    assert response.status_code == 200
    assert response.json()["id"] == "tshirt.basic.black"


def test_search_finds_by_exact_id(api) -> None:
    create(api)
    create(api, id="tshirt.basic", name="Plain", barcode="1")

    assert [p["id"] for p in results(api.get("products", search="tshirt.basic"))] == ["tshirt.basic"]


def test_search_finds_by_exact_barcode(api) -> None:
    create(api)
    create(api, id="other", name="Other", barcode="570")

    assert [p["id"] for p in results(api.get("products", search="5701234567890"))] == ["tshirt.basic.black"]


def test_search_finds_a_substring_of_any_language_name_ignoring_case(api) -> None:
    create(api, id="apple", name={"da": "Æblemost", "en": "Apple juice"}, barcode=...)
    create(api, id="pear", name="Pear juice", barcode=...)

    assert [p["id"] for p in results(api.get("products", search="ÆBLE"))] == ["apple"]
    assert [p["id"] for p in results(api.get("products", search="Juice"))] == ["apple", "pear"]


def test_search_follows_a_rename(api) -> None:
    create(api, name="Old name")
    api.patch("products/tshirt.basic.black", {"name": {"en": "New name"}})

    assert results(api.get("products", search="old name")) == []
    assert len(results(api.get("products", search="new name"))) == 1


def test_barcode_and_product_group_filters_are_exact(api) -> None:
    create(api)
    create(api, id="b", barcode="57012", product_group="topsy")

    assert [p["id"] for p in results(api.get("products", barcode="57012"))] == ["b"]
    assert [p["id"] for p in results(api.get("products", product_group="tops"))] == ["tshirt.basic.black"]


def test_an_empty_filter_means_no_filter(api) -> None:
    create(api)

    assert len(results(api.get("products", search="", barcode=""))) == 1


def test_a_search_with_a_nul_character_is_refused(api) -> None:
    assert api.get("products", search="a\x00b").status_code == 400


def test_another_accounts_product_is_not_found(api, other_tenant) -> None:
    AdminApi(api.client, other_tenant).post("products", product_body())

    assert api.get("products/tshirt.basic.black").status_code == 404
    assert api.put("products/tshirt.basic.black", product_body()).status_code == 404
    assert api.delete("products/tshirt.basic.black").status_code == 404
    assert results(api.get("products")) == []


# --- Scopes ----------------------------------------------------------------------------------------------


def pos_api(api: AdminApi, tenant: Tenant) -> AdminApi:
    """The admin API's routes called with the tenant's POS key."""
    tenant_with_pos = Tenant(**{**tenant.__dict__, "admin_key": tenant.pos_key})
    return AdminApi(api.client, tenant_with_pos)


def test_a_pos_key_can_list_and_read_products(api, tenant) -> None:
    create(api)
    pos = pos_api(api, tenant)

    assert len(results(pos.get("products", search="black"))) == 1
    assert pos.get("products/tshirt.basic.black").status_code == 200


def test_a_pos_key_cannot_write_products(api, tenant) -> None:
    create(api)
    pos = pos_api(api, tenant)

    assert pos.post("products", product_body(id="new")).status_code == 403
    assert pos.patch("products/tshirt.basic.black", {"name": "x"}).status_code == 403
    assert pos.delete("products/tshirt.basic.black").status_code == 403
    assert len(events(tenant)) == 1


def test_an_imports_key_cannot_read_products(api, tenant) -> None:
    imports = AdminApi(api.client, Tenant(**{**tenant.__dict__, "admin_key": tenant.imports_key}))

    response = imports.get("products")

    assert response.status_code == 403
    assert "'admin' or the 'pos' scope" in response.json()["message"]


def test_no_credentials_is_a_401(api) -> None:
    assert api.client.get("/api/v1/products/").status_code == 401


def test_an_id_with_a_nul_character_in_the_url_is_not_found(api) -> None:
    assert api.get("products/a%00b").status_code == 404


def test_a_market_price_with_too_many_markets_is_refused(api) -> None:
    response = api.post("products", product_body(retail_price={f"m{i}": 1 for i in range(101)}))

    assert error_fields(response) == {"retail_price"}
