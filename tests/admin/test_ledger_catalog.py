"""The catalog in the admin: products and expenses saved through the catalog services (so product changes
emit their events), product edit events and newsletter signups read-only."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from ledger.models import Expense, NewsletterSignup, Product, ProductEditEvent
from ledger.services import catalog as services
from tests.support.admin import admin_url, listed
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


def product_form(tenant: Tenant, **overrides: Any) -> dict[str, Any]:
    form = {
        "account": tenant.account.pk,
        "product_id": "tshirt.basic",
        "name": '{"da": "T-shirt", "en": "T-shirt"}',
        "description": "",
        "barcode": "5701234567890",
        "image_url": "",
        "product_group": "tops",
        "retail_price": '{"dk": 199.95}',
        "cost_price": "60.50",
        "taxes": '[{"name": "VAT", "rate": 0.25, "type": "vat"}]',
    }
    form.update(overrides)
    return form


def make_product(tenant: Tenant, **data: Any) -> Product:
    return services.create_product(
        account=tenant.account, data={"id": "tshirt.basic", "name": "T-shirt", "retail_price": 100, **data}
    )


def form_errors(response: Any) -> dict[str, list[str]]:
    assert response.status_code == 200, "the form was accepted"
    return {field: list(errors) for field, errors in response.context["adminform"].form.errors.items()}


def test_adding_a_product_saves_it_and_emits_a_create_event(admin_client, tenant) -> None:
    response = admin_client.post(admin_url(Product, "add"), product_form(tenant))

    assert response.status_code == 302
    product = Product.objects.get(account=tenant.account)
    assert product.retail_price == {"dk": Decimal("199.95")}
    assert product.cost_price == Decimal("60.5")
    assert product.search_text == "t-shirt\nt-shirt"
    [event] = ProductEditEvent.objects.all()
    assert (event.event, event.document["product"]["id"]) == ("create", "tshirt.basic")


def test_a_plain_text_name_and_a_single_price_are_accepted(admin_client, tenant) -> None:
    admin_client.post(admin_url(Product, "add"), product_form(tenant, name="Mug", retail_price="49.95"))

    product = Product.objects.get()
    assert (product.name, product.retail_price) == ("Mug", Decimal("49.95"))


def test_a_price_for_an_unknown_market_is_a_form_error(admin_client, tenant) -> None:
    response = admin_client.post(admin_url(Product, "add"), product_form(tenant, retail_price='{"se": 10}'))

    assert list(form_errors(response)) == ["retail_price"]
    assert "retail_price.se" in form_errors(response)["retail_price"][0]
    assert not Product.objects.exists()


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"name": '{"da": 5}'}, "name"),
        ({"name": "{not json"}, "name"),
        ({"retail_price": "cheap"}, "retail_price"),
        ({"retail_price": "-1"}, "retail_price"),
        ({"taxes": '[{"name": "VAT", "rate": 25, "type": "vat"}]'}, "taxes"),
        ({"taxes": '{"name": "VAT"}'}, "taxes"),
        ({"product_id": "a/b"}, "product_id"),
        ({"image_url": "not a url"}, "image_url"),
    ],
)
def test_invalid_product_json_is_a_form_error_on_its_field(admin_client, tenant, overrides, field) -> None:
    response = admin_client.post(admin_url(Product, "add"), product_form(tenant, **overrides))

    assert field in form_errors(response)
    assert not ProductEditEvent.objects.exists()


def test_a_duplicate_product_id_is_a_form_error(admin_client, tenant) -> None:
    make_product(tenant)

    response = admin_client.post(admin_url(Product, "add"), product_form(tenant))

    assert form_errors(response)
    assert ProductEditEvent.objects.count() == 1


def test_changing_a_product_emits_an_update_event_with_the_changed_fields(admin_client, tenant) -> None:
    product = make_product(tenant)
    form = product_form(tenant, name="T-shirt", retail_price="100", barcode="", product_group="", cost_price="")
    form.update(taxes="", retail_price="120")

    response = admin_client.post(admin_url(product, "change", product.pk), form)

    assert response.status_code == 302
    update = ProductEditEvent.objects.order_by("id").last()
    assert update.event == "update"
    assert update.document["changed"] == ["retail_price"]
    assert update.document["product"]["retail_price"] == 120


def test_saving_an_unchanged_product_emits_no_event(admin_client, tenant) -> None:
    product = make_product(tenant)
    form = product_form(tenant, name="T-shirt", retail_price="100", barcode="", product_group="", cost_price="")
    form.update(taxes="")

    response = admin_client.post(admin_url(product, "change", product.pk), form)

    assert response.status_code == 302
    assert list(ProductEditEvent.objects.values_list("event", flat=True)) == ["create"]


def test_the_change_page_shows_the_json_fields(admin_client, tenant) -> None:
    product = make_product(tenant, name={"da": "Æble"}, retail_price={"dk": Decimal("9.5")})

    content = admin_client.get(admin_url(product, "change", product.pk)).content.decode()

    assert "{&quot;da&quot;: &quot;Æble&quot;}" in content
    assert "{&quot;dk&quot;: 9.5}" in content


def test_the_product_id_cannot_be_changed_in_the_admin(admin_client, tenant) -> None:
    product = make_product(tenant)
    form = product_form(tenant, product_id="renamed", name="Renamed", retail_price="100", cost_price="")
    form.update(barcode="", product_group="", taxes="")

    admin_client.post(admin_url(product, "change", product.pk), form)

    assert Product.objects.get().product_id == "tshirt.basic"


def test_deleting_a_product_emits_a_delete_event(admin_client, tenant) -> None:
    product = make_product(tenant)

    response = admin_client.post(admin_url(product, "delete", product.pk), {"post": "yes"})

    assert response.status_code == 302
    assert not Product.objects.exists()
    assert ProductEditEvent.objects.order_by("id").last().document["event"] == "delete"


def test_bulk_deleting_products_emits_one_event_each(admin_client, tenant) -> None:
    first = make_product(tenant)
    second = make_product(tenant, id="mug")

    admin_client.post(
        admin_url(Product, "changelist"),
        {"action": "delete_selected", "_selected_action": [first.pk, second.pk], "post": "yes"},
    )

    assert not Product.objects.exists()
    assert ProductEditEvent.objects.filter(event="delete").count() == 2


def test_product_search_finds_by_name(admin_client, tenant) -> None:
    wanted = make_product(tenant, name={"da": "Æblemost"})
    make_product(tenant, id="pear", name="Pear juice")

    assert listed(admin_client.get(admin_url(Product, "changelist"), {"q": "æblemost"})) == [wanted]


def test_adding_an_expense_with_taxes_per_market(admin_client, tenant) -> None:
    form = {
        "account": tenant.account.pk,
        "expense_id": "coffee",
        "name": "Coffee",
        "taxes": '{"dk": [{"name": "VAT", "rate": 0.25, "type": "vat"}]}',
    }

    response = admin_client.post(admin_url(Expense, "add"), form)

    assert response.status_code == 302
    assert Expense.objects.get().taxes == {"dk": [{"name": "VAT", "rate": Decimal("0.25"), "type": "vat"}]}


def test_an_expense_with_taxes_of_an_unknown_market_is_a_form_error(admin_client, tenant) -> None:
    form = {"account": tenant.account.pk, "expense_id": "coffee", "name": "Coffee", "taxes": '{"se": []}'}

    response = admin_client.post(admin_url(Expense, "add"), form)

    assert list(form_errors(response)) == ["taxes"]


def test_changing_an_expense_name(admin_client, tenant) -> None:
    expense = services.create_expense(account=tenant.account, data={"id": "coffee", "name": "Coffee"})

    response = admin_client.post(admin_url(expense, "change", expense.pk), {"name": '{"da": "Kaffe"}', "taxes": ""})

    assert response.status_code == 302
    expense.refresh_from_db()
    assert (expense.name, expense.taxes) == ({"da": "Kaffe"}, None)


def test_product_edit_events_are_read_only(admin_client, tenant) -> None:
    make_product(tenant)
    event = ProductEditEvent.objects.get()

    assert admin_client.get(admin_url(ProductEditEvent, "add")).status_code == 403
    assert admin_client.get(admin_url(event, "change", event.pk)).status_code == 200
    assert admin_client.post(admin_url(event, "delete", event.pk), {"post": "yes"}).status_code == 403
    assert ProductEditEvent.objects.exists()


def test_newsletter_signups_are_read_only_and_searchable(admin_client, tenant) -> None:
    signup, _ = services.record_newsletter_signup(account=tenant.account, data={"email": "jane@example.com"})
    services.record_newsletter_signup(account=tenant.account, data={"email": "john@example.com"})

    assert listed(admin_client.get(admin_url(NewsletterSignup, "changelist"), {"q": "jane"})) == [signup]
    assert admin_client.get(admin_url(signup, "change", signup.pk)).status_code == 200
    assert admin_client.get(admin_url(NewsletterSignup, "add")).status_code == 403
    assert admin_client.post(admin_url(signup, "change", signup.pk), {"email": "x@example.com"}).status_code == 403
