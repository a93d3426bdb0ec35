"""The export queue form by type: typed fields assembled into the JSON the REST API stores, errors on the field
they concern, masked secrets, the outbound guard's warning, the live preview and the test delivery."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.messages import get_messages
from django.http import HttpResponse

from exports.models import ExportDelivery, ExportItem, ExportQueue
from exports.serializers import MASK
from tests.support.admin import admin_url
from tests.support.api import AdminApi
from tests.support.imports import import_orders
from tests.support.queues import SECRET, admin_queue_form, make_queue
from tests.support.receivers import Receiver
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


def form_errors(response: HttpResponse) -> dict[str, list[str]]:
    assert response.status_code == 200, "the form was saved"
    form = response.context["adminform"].form
    return {name: [str(e) for e in errors] for name, errors in form.errors.items()}


def stored_by_api(client: Any, tenant: Tenant, transform: dict[str, Any], delivery: dict[str, Any]) -> ExportQueue:
    body = {
        "name": "by the api",
        "entity_type": "incoming_order_state_changes",
        "trigger": "realtime",
        "transform": transform,
        "delivery": delivery,
    }
    response = AdminApi(client, tenant).post("export-queues", body)
    assert response.status_code == 201, response.content
    return ExportQueue.objects.get(pk=response.json()["id"])


TRANSFORMS = [
    ({"transform__skip_voided": "on"}, {"type": "identity", "skip_voided": True}),
    (
        {
            "transform__type": "mustache",
            "transform__template": '{{#elements}}{"id": "{{order.order_identifier}}"}{{/elements}}\n',
            "transform__content_type": "application/json",
            "transform__escape": "json",
        },
        {
            "type": "mustache",
            "template": '{{#elements}}{"id": "{{order.order_identifier}}"}{{/elements}}\n',
            "content_type": "application/json",
            "escape": "json",
        },
    ),
    (
        {
            "transform__type": "handlebars",
            "transform__template": "{{#each elements}}{{order.order_identifier}};{{/each}}",
            "transform__date_format": "%d.%m.%Y",
            "transform__decimal_separator": ",",
        },
        {
            "type": "handlebars",
            "template": "{{#each elements}}{{order.order_identifier}};{{/each}}",
            "date_format": "%d.%m.%Y",
            "decimal_separator": ",",
        },
    ),
    (
        {
            "transform__type": "csv",
            "transform__rows": "entity",
            "transform__separator": ",",
            "transform__decimal_separator": ".",
            "transform__columns": [
                {"header": "Order", "path": "order.order_identifier"},
                {"header": "Total", "path": "order.summary.total", "format": "money"},
            ],
            # header left unticked: no header row; whole numbers as integers left ticked (the default)
            "transform__whole_numbers_as_integers": "on",
        },
        {
            "type": "csv",
            "rows": "entity",
            "separator": ",",
            "decimal_separator": ".",
            "header": False,
            "columns": [
                {"header": "Order", "path": "order.order_identifier"},
                {"header": "Total", "path": "order.summary.total", "format": "money"},
            ],
        },
    ),
    (
        {
            "transform__type": "simple_json",
            "transform__fields": {"id": "{order.order_identifier}", "note": "Order {order.order_identifier}"},
            "transform__drop_empty": "on",
        },
        {
            "type": "simple_json",
            "fields": {"id": "{order.order_identifier}", "note": "Order {order.order_identifier}"},
            "drop_empty": True,
        },
    ),
]


@pytest.mark.parametrize(("fields", "expected"), TRANSFORMS, ids=[e["type"] for _, e in TRANSFORMS])
def test_each_transform_type_saves_from_its_fields_the_json_the_api_stores(
    admin_client, client, tenant, fields, expected
) -> None:
    response = admin_client.post(admin_url(ExportQueue, "add"), admin_queue_form(tenant, **fields))
    assert response.status_code == 302, form_errors(response)
    saved = ExportQueue.objects.get(name="orders to erp")
    assert saved.transform == expected
    by_api = stored_by_api(client, tenant, expected, saved.delivery)
    assert by_api.transform == saved.transform and by_api.delivery == saved.delivery


DELIVERIES = [
    (
        {
            "delivery__headers": {"X-Shop": "acme", "Accept": "application/json"},
            "delivery__auth_type": "bearer",
            "delivery__auth_token": "t0ken",
            "delivery__auth_username": "ignored: not basic",
        },
        {
            "type": "webhook",
            "url": "https://erp.example.com/hook",
            "secret": SECRET,
            "headers": {"X-Shop": "acme", "Accept": "application/json"},
            "auth": {"type": "bearer", "token": "t0ken"},
        },
    ),
    (
        {
            "delivery__type": "email",
            "delivery__recipients": "ops@example.com\n\nerp@example.com\n",
            "delivery__subject": "Orders {date}",
            "delivery__from_name": "Acme exports",
            "delivery__reply_to": "erp@example.com",
        },
        {
            "type": "email",
            "recipients": ["ops@example.com", "erp@example.com"],
            "subject": "Orders {date}",
            "from_name": "Acme exports",
            "reply_to": "erp@example.com",
        },
    ),
    (
        {
            "delivery__type": "ftp",
            "delivery__host": "ftp.example.com",
            "delivery__port": "2121",
            "delivery__username": "exports",
            "delivery__password": "pw",
            "delivery__tls": "on",
            "delivery__path": "in/{delivery_id}.{ext}",
            # passive left ticked (the default): not written
            "delivery__passive": "on",
        },
        {
            "type": "ftp",
            "host": "ftp.example.com",
            "port": 2121,
            "username": "exports",
            "password": "pw",
            "tls": True,
            "path": "in/{delivery_id}.{ext}",
        },
    ),
    (
        {
            "delivery__type": "sftp",
            "delivery__host": "sftp.example.com",
            "delivery__username": "exports",
            "delivery__password": "pw",
            "delivery__insecure_accept_any_host_key": "on",
            "delivery__timeout": "20",
        },
        {
            "type": "sftp",
            "host": "sftp.example.com",
            "username": "exports",
            "password": "pw",
            "insecure_accept_any_host_key": True,
            "timeout": 20,
        },
    ),
]


@pytest.mark.parametrize(("fields", "expected"), DELIVERIES, ids=[e["type"] for _, e in DELIVERIES])
def test_each_delivery_type_saves_from_its_fields_the_json_the_api_stores(
    admin_client, client, tenant, fields, expected
) -> None:
    response = admin_client.post(admin_url(ExportQueue, "add"), admin_queue_form(tenant, **fields))
    assert response.status_code == 302, form_errors(response)
    saved = ExportQueue.objects.get(name="orders to erp")
    assert saved.delivery == expected
    assert stored_by_api(client, tenant, saved.transform, expected).delivery == saved.delivery


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"delivery__url": ""}, "delivery__url", "is required"),
        ({"delivery__auth_type": "bearer"}, "delivery__auth_token", "is required"),
        (
            {"delivery__type": "email", "delivery__recipients": "not an address"},
            "delivery__recipients",
            "",
        ),
        (
            {"transform__type": "csv", "transform__columns": [{"header": "A", "path": "a"}, {"header": "B"}]},
            "transform__columns",
            "row 2",
        ),
        ({"transform__type": "mustache", "transform__template": ""}, "transform__template", ""),
        ({"transform__type": "csv", "transform__separator": "ab"}, "transform__columns", ""),
        ({"delivery__type": "ftp", "delivery__host": ""}, "delivery__host", ""),
    ],
)
def test_an_error_lands_on_the_field_it_concerns(admin_client, tenant, fields, field, message) -> None:
    errors = form_errors(admin_client.post(admin_url(ExportQueue, "add"), admin_queue_form(tenant, **fields)))
    assert field in errors, errors
    assert message in " ".join(errors[field])
    assert not ExportQueue.objects.exists()


def test_the_change_form_shows_secrets_masked_and_keeps_them_when_saved_back(admin_client, tenant) -> None:
    queue = make_queue(
        tenant,
        "https://erp.example.com/hook",
        delivery={"auth": {"type": "bearer", "token": "t0ken"}, "skip": None},
        transform={"type": "identity", "skip_if": {"path": "voided", "equals": True}},
    )
    queue.delivery.pop("skip")
    queue.save()
    form = admin_client.get(admin_url(ExportQueue, "change", queue.pk)).context["adminform"].form
    shown = {name: form[name].value() for name in ("delivery__secret", "delivery__auth_token", "delivery__headers")}
    assert shown["delivery__secret"] == MASK and shown["delivery__auth_token"] == MASK
    assert json.loads(shown["delivery__headers"]) == {"X-Shop": MASK}
    assert "t0ken" not in admin_client.get(admin_url(ExportQueue, "change", queue.pk)).content.decode()

    data = admin_queue_form(
        None,
        name="renamed",
        delivery__secret=MASK,
        delivery__headers={"X-Shop": MASK, "X-New": "v"},
        delivery__auth_type="bearer",
        delivery__auth_token=MASK,
    )
    response = admin_client.post(admin_url(ExportQueue, "change", queue.pk), data)
    assert response.status_code == 302, form_errors(response)
    queue.refresh_from_db()
    assert queue.name == "renamed"
    assert queue.delivery["secret"] == SECRET
    assert queue.delivery["headers"] == {"X-Shop": "acme", "X-New": "v"}
    assert queue.delivery["auth"] == {"type": "bearer", "token": "t0ken"}
    assert queue.delivery["read_timeout"] == 2  # no field shows it: kept
    assert queue.transform == {"type": "identity", "skip_if": {"path": "voided", "equals": True}}


def test_with_edit_json_ticked_the_json_is_saved_and_the_fields_ignored(admin_client, tenant) -> None:
    data = admin_queue_form(
        tenant,
        edit_json="on",
        transform={"type": "simple_json", "fields": {"id": "{id}"}},
        delivery={"type": "email", "recipients": ["ops@example.com"]},
        filters={"markets": ["dk"]},
    )
    response = admin_client.post(admin_url(ExportQueue, "add"), data)
    assert response.status_code == 302, form_errors(response)
    saved = ExportQueue.objects.get()
    assert saved.transform["type"] == "simple_json" and saved.delivery["type"] == "email"
    assert saved.filters == {"markets": ["dk"]}


def test_the_filters_are_comma_separated_lists(admin_client, tenant) -> None:
    data = admin_queue_form(tenant, filters__markets="dk, se", filters__stock_locations="")
    assert admin_client.post(admin_url(ExportQueue, "add"), data).status_code == 302
    assert ExportQueue.objects.get().filters == {"markets": ["dk", "se"]}


# --- The outbound guard's warning on save ---------------------------------------------------------------------


def saved_messages(response: HttpResponse) -> list[tuple[str, str]]:
    return [(m.level_tag, str(m)) for m in get_messages(response.wsgi_request)]


REFUSED = ["http://127.0.0.1:9/hook", "https://10.0.0.7/hook", "http://localhost:9/hook", "http://93.184.216.34/h"]


@pytest.mark.parametrize("url", REFUSED, ids=str)
def test_saving_a_destination_the_guard_refuses_warns_naming_the_setting(admin_client, tenant, url) -> None:
    response = admin_client.post(admin_url(ExportQueue, "add"), admin_queue_form(tenant, delivery__url=url))
    assert response.status_code == 302  # a warning, not a refusal
    warnings = [text for level, text in saved_messages(response) if level == "warning"]
    assert len(warnings) == 1 and "OUTBOUND_ALLOWED_NETWORKS" in warnings[0]
    assert ExportQueue.objects.get().delivery["url"] == url


def test_an_allowed_destination_saves_without_a_warning(admin_client, tenant, allow_loopback) -> None:
    response = admin_client.post(
        admin_url(ExportQueue, "add"), admin_queue_form(tenant, delivery__url="http://127.0.0.1:9/h")
    )
    assert response.status_code == 302
    assert [level for level, _ in saved_messages(response) if level == "warning"] == []


def test_an_sftp_host_on_a_private_address_warns(admin_client, tenant) -> None:
    fields = {
        "delivery__type": "sftp",
        "delivery__host": "192.168.1.20",
        "delivery__username": "u",
        "delivery__password": "p",
        "delivery__insecure_accept_any_host_key": "on",
    }
    response = admin_client.post(admin_url(ExportQueue, "add"), admin_queue_form(tenant, **fields))
    warnings = [text for level, text in saved_messages(response) if level == "warning"]
    assert "192.168.1.20" in warnings[0] and "OUTBOUND_ALLOWED_NETWORKS" in warnings[0]


# --- Live preview, entities, test delivery ---------------------------------------------------------------------


def test_the_entities_endpoint_lists_recent_entities_and_their_fields(admin_client, client, tenant) -> None:
    import_orders(client, tenant, "WEB-1", "WEB-2")
    params = {"entity_type": "incoming_order_state_changes", "account": tenant.account.pk}
    data = admin_client.get(admin_url(ExportQueue, "entities"), params).json()
    assert [e["label"].split(":")[0] for e in data["entities"]] == ["WEB-2", "WEB-1"]
    assert "order.order_identifier" in data["paths"]
    empty = admin_client.get(admin_url(ExportQueue, "entities"), {**params, "entity_type": "sales"}).json()
    assert empty["entities"] == [] and "No stored entity" in empty["note"]


def test_the_live_preview_renders_the_typed_transform_on_the_chosen_entity_indented(
    admin_client, client, tenant
) -> None:
    import_orders(client, tenant, "WEB-1", "WEB-2")
    params = {"entity_type": "incoming_order_state_changes", "account": tenant.account.pk}
    first = admin_client.get(admin_url(ExportQueue, "entities"), params).json()["entities"][-1]
    fields = {"transform__type": "simple_json", "transform__fields": {"id": "{order.order_identifier}"}}
    data = admin_queue_form(tenant, _preview_object=str(first["id"]), **fields)
    answer = admin_client.post(admin_url(ExportQueue, "preview_live"), data).json()
    assert answer["ok"] and '\n    "id": "WEB-1"\n' in answer["content"]  # indented
    assert list(json.loads(answer["content"]).values()) == [{"id": "WEB-1"}]
    csv = {
        "transform__type": "csv",
        "transform__header": "on",
        "transform__whole_numbers_as_integers": "on",
        "transform__columns": [{"header": "Order", "path": "order.order_identifier"}],
    }
    answer = admin_client.post(admin_url(ExportQueue, "preview_live"), admin_queue_form(tenant, **csv)).json()
    assert answer["content"] == "Order\r\nWEB-2\r\n" and answer["content_type"].startswith("text/csv")
    assert not ExportQueue.objects.exists()


def test_the_live_preview_names_what_is_wrong(admin_client, client, tenant) -> None:
    import_orders(client, tenant, "WEB-1")
    data = admin_queue_form(tenant, transform__type="csv", transform__columns=[{"header": "A", "path": "[["}])
    answer = admin_client.post(admin_url(ExportQueue, "preview_live"), data).json()
    assert not answer["ok"] and "transform.columns[0].path" in answer["error"]


def test_a_test_delivery_sends_once_reports_the_answer_and_writes_no_export_item(
    admin_client, client, tenant, receiver: Receiver, allow_loopback
) -> None:
    queue = make_queue(tenant, receiver.url)
    import_orders(client, tenant, "WEB-1")
    receiver.received.clear()
    items, deliveries = ExportItem.objects.count(), ExportDelivery.objects.count()

    response = admin_client.post(admin_url(ExportQueue, "test_delivery", queue.pk), {"_preview_object": ""})
    assert response.status_code == 302
    [(level, text)] = saved_messages(response)
    assert level == "success" and "answered HTTP 200: ok" in text
    [sent] = receiver.received
    assert sent.headers["webhook-id"].startswith("test_") and b"WEB-1" in sent.body
    assert (ExportItem.objects.count(), ExportDelivery.objects.count()) == (items, deliveries)

    receiver.script = ["echo:403"]
    second = admin_client.post(admin_url(ExportQueue, "test_delivery", queue.pk), {})
    level, text = saved_messages(second)[-1]  # (the first answer's message was never shown: still stored)
    assert level == "error" and "HTTP 403" in text and "denied POST" in text
    assert SECRET not in text


def test_a_test_delivery_without_an_entity_says_so(admin_client, tenant, allow_loopback) -> None:
    queue = make_queue(tenant, "http://127.0.0.1:9/hook")
    [(level, text)] = saved_messages(admin_client.post(admin_url(ExportQueue, "test_delivery", queue.pk), {}))
    assert level == "error" and "no stored entity" in text


def test_the_live_preview_answers_the_fields_as_json_with_secrets_masked(admin_client, tenant) -> None:
    fields = {"delivery__auth_type": "bearer", "delivery__auth_token": "t0ken", "filters__markets": "dk"}
    answer = admin_client.post(admin_url(ExportQueue, "preview_live"), admin_queue_form(tenant, **fields)).json()
    config = answer["config"]
    assert config["transform"] == {"type": "identity"} and config["filters"] == {"markets": ["dk"]}
    assert config["delivery"]["auth"] == {"type": "bearer", "token": MASK} and config["delivery"]["secret"] == MASK
    assert "t0ken" not in json.dumps(answer)


def test_the_saved_queue_preview_page_indents_json(admin_client, client, tenant) -> None:
    queue = make_queue(tenant, "https://erp.example.com/hook")
    import_orders(client, tenant, "WEB-1")
    page = admin_client.get(admin_url(ExportQueue, "preview", queue.pk)).content.decode()
    assert "\n    &quot;order&quot;: {\n      &quot;order_identifier&quot;: &quot;WEB-1&quot;" in page


def posted_back(form: Any) -> dict[str, str]:
    """What a browser posts when nothing on the change form is touched."""
    data: dict[str, str] = {"_save": "Save"}
    for name, field in form.fields.items():
        if name == "account" or field.disabled:
            continue
        value = form[name].value()
        if isinstance(value, bool):
            if value:
                data[name] = "on"
        elif value is not None:
            data[name] = value if isinstance(value, str) else field.widget.format_value(value) or str(value)
    return data


CONFIGS = [("transform", expected) for _, expected in TRANSFORMS] + [("delivery", e) for _, e in DELIVERIES]


@pytest.mark.parametrize(("group", "config"), CONFIGS, ids=[f"{g}-{c['type']}" for g, c in CONFIGS])
def test_a_stored_configuration_saved_back_untouched_from_the_fields_stays_the_same(
    admin_client, tenant, group, config
) -> None:
    queue = make_queue(tenant, "https://erp.example.com/hook", **{group: config})
    stored = (queue.transform, queue.delivery, queue.filters)
    form = admin_client.get(admin_url(ExportQueue, "change", queue.pk)).context["adminform"].form
    data = posted_back(form)
    assert "transform__type" in data and "edit_json" not in data  # the fields, not the JSON, are saved
    for raw in ("filters", "transform", "delivery"):
        data.pop(raw)  # and nothing is lent by the JSON text: the fields alone give the same configuration
    response = admin_client.post(admin_url(ExportQueue, "change", queue.pk), data)
    assert response.status_code == 302, form_errors(response)
    queue.refresh_from_db()
    assert (queue.transform, queue.delivery, queue.filters) == stored


def test_a_rows_table_that_is_not_json_is_an_error_and_saves_nothing(admin_client, tenant) -> None:
    data = admin_queue_form(tenant, transform__type="csv", transform__columns="[not json")
    errors = form_errors(admin_client.post(admin_url(ExportQueue, "add"), data))
    assert errors and not ExportQueue.objects.exists()


def test_csv_columns_take_a_constant_or_a_derived_value_and_keep_a_language_set_in_json(admin_client, tenant) -> None:
    columns = [
        {"header": "Account", "value": "1010"},
        {"header": "Type", "derived": "type"},
        {"header": "Name", "path": "order.basket.line_items[0].name", "language": ["da", "en"]},
    ]
    fields = {
        "transform__type": "csv",
        "transform__columns": columns,
        "transform__header": "on",
        "transform__whole_numbers_as_integers": "on",
        "transform__required_values": "order.order_identifier",
        "transform__language": "da, en",
    }
    response = admin_client.post(admin_url(ExportQueue, "add"), admin_queue_form(tenant, **fields))
    assert response.status_code == 302, form_errors(response)
    transform = ExportQueue.objects.get().transform
    assert transform["columns"] == columns
    assert transform["required_values"] == ["order.order_identifier"] and transform["language"] == ["da", "en"]
