"""Changing and deleting products (PUT, PATCH, DELETE) and the update and delete events they emit."""

from __future__ import annotations

from decimal import Decimal

import pytest

from exports.services import enqueueing
from ledger.models import Product, ProductEditEvent
from ledger.services import catalog as services
from tests.support.api import error_fields
from tests.support.products import create, events, product_body, raw

pytestmark = pytest.mark.django_db

URL = "products/tshirt.basic.black"


def test_put_emits_an_update_event_with_the_new_product_and_the_changed_fields(api, tenant) -> None:
    create(api)

    response = api.put(URL, product_body(name="Black tee", retail_price={"dk": 149}))

    assert response.status_code == 200
    update = events(tenant)[-1]
    assert update["event"] == "update"
    assert update["changed"] == ["name", "retail_price"]
    assert update["product"] == {
        "id": "tshirt.basic.black",
        "name": "Black tee",
        "barcode": "5701234567890",
        "product_group": "tops",
        "retail_price": {"dk": 149},
        "cost_price": Decimal("60.5"),
        "taxes": [{"name": "VAT", "rate": Decimal("0.25"), "type": "vat"}],
    }


def test_put_resets_omitted_optional_fields_to_absent(api, tenant) -> None:
    create(api)

    body = api.put(URL, {"name": "T-shirt"}).json()

    assert set(body) == {"id", "name", "created_at", "updated_at"}
    assert events(tenant)[-1]["changed"] == ["name", "barcode", "product_group", "retail_price", "cost_price", "taxes"]
    product = Product.objects.get()
    assert (product.barcode, product.retail_price, product.cost_price, product.taxes) == ("", None, None, None)


def test_put_without_changes_emits_no_event(api, tenant) -> None:
    created = create(api)

    response = api.put(URL, product_body(retail_price={"dk": Decimal("199.950")}, cost_price=60.5000))

    assert response.status_code == 200
    assert response.json()["updated_at"] == created["updated_at"]
    assert [e["event"] for e in events(tenant)] == ["create"]


def test_put_may_repeat_the_id_of_the_url(api) -> None:
    create(api)

    assert api.put(URL, product_body(name="Tee")).status_code == 200


def test_the_id_of_a_product_cannot_change(api, tenant) -> None:
    create(api)

    response = api.patch(URL, {"id": "tshirt.basic.white"})

    assert response.status_code == 400
    assert error_fields(response) == {"id"}
    assert response.json()["errors"][0]["code"] == "immutable"
    assert Product.objects.get().product_id == "tshirt.basic.black"


def test_patch_changes_only_the_given_fields(api, tenant) -> None:
    create(api)

    body = api.patch(URL, {"cost_price": 55}).json()

    assert body["cost_price"] == 55
    assert body["barcode"] == "5701234567890"
    assert events(tenant)[-1]["changed"] == ["cost_price"]


def test_patch_with_null_makes_a_product_variable_price(api, tenant) -> None:
    create(api)

    body = api.patch(URL, {"retail_price": None}).json()

    assert "retail_price" not in body
    assert Product.objects.get().retail_price is None
    assert events(tenant)[-1]["changed"] == ["retail_price"]


def test_patch_cannot_null_the_name(api) -> None:
    create(api)

    response = api.patch(URL, {"name": None})

    assert response.status_code == 400
    assert error_fields(response) == {"name"}


def test_put_requires_the_name(api) -> None:
    create(api)

    assert error_fields(api.put(URL, {"barcode": "1"})) == {"name"}


def test_a_refused_change_emits_no_event_and_changes_nothing(api, tenant) -> None:
    create(api)

    response = api.patch(URL, {"name": "New", "retail_price": {"se": 10}})

    assert error_fields(response) == {"retail_price.se"}
    assert Product.objects.get().name == {"da": "T-shirt, sort", "en": "T-shirt, black"}
    assert [e["event"] for e in events(tenant)] == ["create"]


def test_a_truncated_patch_body_is_refused(api) -> None:
    create(api)

    response = raw(api, "patch", URL, '{"name": "x"')

    assert response.status_code == 400
    assert error_fields(response) == {"body"}


def test_changing_a_missing_product_is_not_found(api, tenant) -> None:
    assert api.patch("products/nope", {"name": "x"}).status_code == 404
    assert events(tenant) == []


def test_delete_emits_a_delete_event_with_the_last_state(api, tenant) -> None:
    create(api)
    api.patch(URL, {"barcode": "999"})

    response = api.delete(URL)

    assert response.status_code == 204
    delete = events(tenant)[-1]
    assert delete["event"] == "delete"
    assert delete["product"]["barcode"] == "999"
    assert delete["product"]["name"] == {"da": "T-shirt, sort", "en": "T-shirt, black"}
    assert "changed" not in delete
    assert api.get(URL).status_code == 404


def test_a_deleted_id_can_be_created_again(api, tenant) -> None:
    create(api)
    api.delete(URL)

    create(api, name="Again")

    assert [e["event"] for e in events(tenant)] == ["create", "delete", "create"]


def test_a_product_whose_event_cannot_be_enqueued_is_not_saved(tenant, monkeypatch) -> None:
    def broken_enqueue(**kwargs: object) -> int:
        raise RuntimeError("outbox unavailable")

    monkeypatch.setattr(enqueueing, "enqueue", broken_enqueue)

    with pytest.raises(RuntimeError):
        services.create_product(account=tenant.account, data={"id": "mug", "name": "Mug"})

    assert not Product.objects.exists()
    assert not ProductEditEvent.objects.exists()


def test_a_delete_whose_event_cannot_be_enqueued_keeps_the_product(api, tenant, monkeypatch) -> None:
    create(api)
    product = Product.objects.get()
    monkeypatch.setattr(enqueueing, "enqueue", lambda **kwargs: 1 / 0)

    with pytest.raises(ZeroDivisionError):
        services.delete_product(account=tenant.account, product=product)

    assert Product.objects.filter(pk=product.pk).exists()
    assert [e["event"] for e in events(tenant)] == ["create"]
