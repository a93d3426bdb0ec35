"""Exports in the admin: queues edited through the services, secrets masked, preview, the export log, retries."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.http import HttpResponse

from exports.models import ExportDelivery, ExportItem, ExportQueue, ExportStatus
from exports.serializers import MASK
from tests.support.admin import admin_url, listed
from tests.support.imports import import_orders
from tests.support.queues import QUEUE_FORM, SECRET, failed_item, make_queue
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


def form_data(tenant: Tenant, **overrides: Any) -> dict[str, str]:
    """The add form's fields; JSON fields may be given as objects or as raw text."""
    data: dict[str, Any] = {
        "account": str(tenant.account.pk),
        **QUEUE_FORM,
        "filters": {},
        "transform": {"type": "identity"},
        "delivery": {"type": "webhook", "url": "https://erp.example.com/hook", "headers": {}},
        "_save": "Save",
        **overrides,
    }
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in data.items()}


def shown_secret(response: HttpResponse) -> str | None:
    match = re.search(r'<code class="webhook-secret">(whsec_[^<]+)</code>', response.content.decode())
    return match.group(1) if match else None


# --- Pages ---------------------------------------------------------------------------------------------------


def test_every_exports_page_renders(admin_client, tenant) -> None:
    queue = make_queue(tenant, "https://example.com/a")
    exported = failed_item(queue, "k-1")
    assert exported.delivery is not None
    pages = [
        admin_url(ExportQueue, "changelist"),
        admin_url(ExportQueue, "add"),
        admin_url(ExportQueue, "change", queue.pk),
        admin_url(ExportQueue, "preview", queue.pk),
        admin_url(ExportItem, "changelist"),
        admin_url(ExportItem, "change", exported.pk),
        admin_url(ExportDelivery, "changelist"),
        admin_url(ExportDelivery, "change", exported.delivery.pk),
    ]
    for url in pages:
        assert admin_client.get(url).status_code == 200, url


def test_the_export_log_is_titled_and_view_only(admin_client, tenant) -> None:
    failed_item(make_queue(tenant, "https://example.com/a"), "k-1")

    response = admin_client.get(admin_url(ExportItem, "changelist"))

    assert response.context["title"] == "Export log"
    assert admin_client.get(admin_url(ExportItem, "add")).status_code == 403


def test_the_delivery_page_lists_its_attempts(admin_client, tenant) -> None:
    exported = failed_item(make_queue(tenant, "https://example.com/a"), "k-1")

    response = admin_client.get(admin_url(ExportDelivery, "change", exported.delivery.pk))

    assert "HTTP 500" in response.content.decode()
    assert [form.original.number for form in response.context["inline_admin_formsets"][0]] == [1]


def test_queue_list_filters_by_account_entity_type_trigger_and_enabled(admin_client, tenant, other_tenant) -> None:
    mine = make_queue(tenant, "https://example.com/a", name="mine", trigger="hourly")
    make_queue(tenant, "https://example.com/b", name="sales", entity_type="sales", enabled=False)
    make_queue(other_tenant, "https://example.com/c", name="theirs")
    url = admin_url(ExportQueue, "changelist")

    assert listed(admin_client.get(url, {"account__id__exact": tenant.account.pk, "trigger__exact": "hourly"})) == [
        mine
    ]
    assert [q.name for q in listed(admin_client.get(url, {"entity_type__exact": "sales"}))] == ["sales"]
    assert [q.name for q in listed(admin_client.get(url, {"enabled__exact": "0"}))] == ["sales"]


def test_export_log_filters_by_status_and_queue(admin_client, tenant) -> None:
    first = make_queue(tenant, "https://example.com/a", name="a")
    second = make_queue(tenant, "https://example.com/b", name="b")
    failed = failed_item(first, "f-1")
    failed_item(first, "s-1", ExportStatus.SUCCESS)
    failed_item(second, "f-2")
    url = admin_url(ExportItem, "changelist")

    assert listed(admin_client.get(url, {"status__exact": "failure", "queue__id__exact": first.pk})) == [failed]


# --- Creating and changing a queue ---------------------------------------------------------------------------


def test_a_web_hook_queue_created_in_the_form_shows_its_generated_secret_once(admin_client, tenant) -> None:
    response = admin_client.post(admin_url(ExportQueue, "add"), form_data(tenant), follow=True)

    queue = ExportQueue.objects.get()
    secret = shown_secret(response)
    assert secret is not None and queue.delivery["secret"] == secret
    assert queue.account == tenant.account
    assert "shown once, copy it now" in response.content.decode()
    change_page = admin_client.get(admin_url(ExportQueue, "change", queue.pk)).content.decode()
    assert secret not in change_page and MASK in change_page


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        ({"delivery": {"type": "webhook", "url": "gopher://erp.example.com"}}, "delivery", "url: "),
        ({"delivery": {"type": "webhook", "url": "https://x.example.com", "secret": "x"}}, "delivery", "secret: "),
        ({"delivery": {"type": "pigeon"}}, "delivery", "type: "),
        ({"transform": {"type": "no such transform"}}, "transform", "type: "),
        ({"filters": '{"colours": ["red"]}'}, "filters", "colours: "),
        ({"delivery": "not json"}, "delivery", "Enter a valid JSON."),
        (
            {"delivery": {"type": "email", "recipients": ["a@acme.example"], "from_name": "A\r\nBcc: b@evil.test"}},
            "delivery",
            "from_name: ",
        ),
        (
            {"delivery": {"type": "email", "recipients": ["a@acme.example"], "reply_to": "a@x.example\nBcc: b@x"}},
            "delivery",
            "reply_to: ",
        ),
    ],
)
def test_a_queue_that_cannot_work_is_refused_with_the_error_on_its_field(
    admin_client, tenant, overrides: dict[str, Any], field: str, message: str
) -> None:
    response = admin_client.post(admin_url(ExportQueue, "add"), form_data(tenant, **overrides))

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert list(errors) == [field]
    assert errors[field][0].startswith(message)
    assert not ExportQueue.objects.exists()


def test_saving_the_masked_form_back_keeps_the_secrets(admin_client, tenant) -> None:
    queue = make_queue(
        tenant, "https://example.com/a", delivery={"auth": {"type": "bearer", "token": "tok-123"}, "read_timeout": 2}
    )
    form = admin_client.get(admin_url(ExportQueue, "change", queue.pk)).context["adminform"].form
    shown = json.loads(form["delivery"].value())
    assert shown["secret"] == MASK and shown["auth"]["token"] == MASK
    shown["url"] = "https://example.com/moved"

    data = form_data(tenant, delivery=shown)
    del data["account"]  # read-only on change
    response = admin_client.post(admin_url(ExportQueue, "change", queue.pk), data, follow=True)

    assert response.status_code == 200
    queue.refresh_from_db()
    assert queue.delivery["url"] == "https://example.com/moved"
    assert queue.delivery["secret"] == SECRET and queue.delivery["auth"]["token"] == "tok-123"
    assert shown_secret(response) is None


def test_renaming_a_queue_to_a_taken_name_is_an_error_on_the_name(admin_client, tenant) -> None:
    make_queue(tenant, "https://example.com/a", name="taken")
    queue = make_queue(tenant, "https://example.com/b", name="free")
    data = form_data(tenant, name="taken")
    del data["account"]

    response = admin_client.post(admin_url(ExportQueue, "change", queue.pk), data)

    assert list(response.context["adminform"].form.errors) == ["name"]


# --- Preview -------------------------------------------------------------------------------------------------


def test_the_change_page_links_to_the_preview(admin_client, tenant) -> None:
    queue = make_queue(tenant, "https://example.com/a")

    page = admin_client.get(admin_url(ExportQueue, "change", queue.pk)).content.decode()

    assert f'href="{admin_url(ExportQueue, "preview", queue.pk)}"' in page


def test_the_preview_renders_the_newest_entity_in_a_pre(admin_client, tenant, client) -> None:
    queue = make_queue(tenant, "https://example.com/a")
    import_orders(client, tenant, "WEB-1", "WEB-2")

    page = admin_client.get(admin_url(ExportQueue, "preview", queue.pk)).content.decode()

    assert re.search(r'<pre class="preview-output">[^<]*WEB-2', page)


def test_the_preview_says_when_there_is_nothing_to_render(admin_client, tenant) -> None:
    queue = make_queue(tenant, "https://example.com/a")

    page = admin_client.get(admin_url(ExportQueue, "preview", queue.pk)).content.decode()

    assert "no stored entity of this type to preview" in page
    assert "preview-output" not in page


# --- Retry actions -------------------------------------------------------------------------------------------


def test_retry_selected_items_hands_them_to_new_deliveries(admin_client, tenant) -> None:
    queue = make_queue(tenant, "https://example.com/a")
    failed = failed_item(queue, "f-1")
    pending = failed_item(queue, "p-1", ExportStatus.PENDING)

    response = admin_client.post(
        admin_url(ExportItem, "changelist"),
        {"action": "retry_selected", "_selected_action": [str(failed.pk), str(pending.pk)]},
        follow=True,
    )

    content = response.content.decode()
    assert "Retried 1 item(s)." in content and "Left 1 pending item(s) alone" in content
    failed.refresh_from_db()
    assert failed.status == ExportStatus.PENDING and failed.delivery.status == ExportStatus.PENDING
    assert ExportDelivery.objects.count() == 3


def test_retry_failed_items_of_the_selected_queues(admin_client, tenant) -> None:
    queue = make_queue(tenant, "https://example.com/a")
    failed_item(queue, "f-1")
    failed_item(queue, "f-2")
    failed_item(queue, "s-1", ExportStatus.SUCCESS)

    response = admin_client.post(
        admin_url(ExportQueue, "changelist"),
        {"action": "retry_failed_items", "_selected_action": [str(queue.pk)]},
        follow=True,
    )

    assert "Retried 2 failed item(s)." in response.content.decode()
    statuses = dict(ExportItem.objects.values_list("element_key", "status"))
    assert statuses == {"f-1": "pending", "f-2": "pending", "s-1": "success"}


def test_the_forms_offer_a_live_preview_and_the_change_form_a_test_delivery(admin_client, tenant) -> None:
    target = admin_url(ExportQueue, "preview_live")
    add_page = admin_client.get(admin_url(ExportQueue, "add")).content.decode()
    assert f'data-preview-url="{target}"' in add_page
    assert "test-delivery-button" not in add_page
    queue = make_queue(tenant, "https://example.com/hook")
    change_page = admin_client.get(admin_url(ExportQueue, "change", queue.pk)).content.decode()
    assert f'data-preview-url="{target}"' in change_page
    assert f'name="_queue" value="{queue.pk}"' in change_page
    assert f'formaction="{admin_url(ExportQueue, "test_delivery", queue.pk)}"' in change_page


def test_the_unsaved_preview_renders_the_transform_as_typed_and_saves_nothing(admin_client, tenant, client) -> None:
    import_orders(client, tenant, "WEB-7")
    template = {"type": "mustache", "template": "{{#elements}}<{{order.order_identifier}}>{{/elements}}"}
    response = admin_client.post(admin_url(ExportQueue, "preview_unsaved"), form_data(tenant, transform=template))
    page = response.content.decode()
    assert response.status_code == 200
    assert re.search(r'<pre class="preview-output">&lt;WEB-7&gt;</pre>', page)
    assert not ExportQueue.objects.exists()


def test_the_unsaved_preview_of_a_stored_queue_uses_the_form_not_the_stored_transform(
    admin_client, tenant, client
) -> None:
    queue = make_queue(tenant, "https://example.com/hook")
    import_orders(client, tenant, "WEB-8")
    typed = {"type": "simple_json", "fields": {"id": "{order.order_identifier}"}}
    data = form_data(tenant, transform=typed, _queue=str(queue.pk))
    del data["account"]  # read-only on the change form: not posted
    page = admin_client.post(admin_url(ExportQueue, "preview_unsaved"), data).content.decode()
    assert "WEB-8" in page and "errornote" not in page
    queue.refresh_from_db()
    assert queue.transform == {"type": "identity"}


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"transform": "{not json"}, "transform: the transform is not valid JSON"),
        ({"transform": {"type": "mustache"}}, "transform.template"),
        ({"account": ""}, "account: choose the account first"),
        ({"entity_type": "nonsense"}, "entity_type"),
    ],
)
def test_the_unsaved_preview_names_what_is_wrong(admin_client, tenant, overrides, message) -> None:
    response = admin_client.post(admin_url(ExportQueue, "preview_unsaved"), form_data(tenant, **overrides))
    assert response.status_code == 200
    assert re.search(r'<p class="errornote">[^<]*' + re.escape(message), response.content.decode())


def test_the_unsaved_preview_only_answers_posts(admin_client) -> None:
    assert admin_client.get(admin_url(ExportQueue, "preview_unsaved")).status_code == 405
