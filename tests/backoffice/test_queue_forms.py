"""Export queues created, changed, previewed, test-sent and deleted in the back-office with the typed queue form:
errors on the field they concern, secrets masked, each change audited, try-outs bounded as the API's are."""

from __future__ import annotations

import json

import pytest
from django.http import HttpResponse
from django.test import Client

from accounts.models import AuditEntry
from exports.models import ExportQueue
from exports.selectors import recent_entities
from exports.serializers import MASK
from tests.support.backoffice import SignIn
from tests.support.imports import import_orders
from tests.support.queues import SECRET, make_queue
from tests.support.queues import backoffice_queue_form as typed
from tests.support.receivers import Receiver
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

NEW = "/backoffice/exports/queues/new/"


@pytest.fixture
def owner(tenant: Tenant, sign_in: SignIn) -> Client:
    return sign_in(tenant.account, "owner")


def errors(response: HttpResponse) -> dict[str, list[str]]:
    return {name: [str(e) for e in errs] for name, errs in response.context["form"].errors.items()}


def test_an_owner_creates_a_web_hook_queue_through_the_form_and_the_creation_is_audited(tenant, owner):
    created = owner.post(NEW, typed())

    assert created.status_code == 302, errors(created)
    queue = ExportQueue.objects.get(account=tenant.account, name="orders to erp")
    assert created["Location"] == f"/backoffice/exports/queues/{queue.pk}/"
    assert queue.delivery == {
        "type": "webhook",
        "url": "https://erp.example.com/hook",
        "headers": {"X-Shop": "acme"},
        "secret": SECRET,
    }
    assert queue.transform == {"type": "identity"} and queue.enabled
    entry = AuditEntry.objects.get(account=tenant.account, target_type="export_queue", target_id=str(queue.pk))
    assert entry.action == "created" and entry.actor_kind == "person" and entry.actor == "owner@acme.example"
    assert SECRET not in json.dumps(entry.changes)


def test_a_web_hook_without_a_secret_gets_one_shown_once(tenant, owner):
    created = owner.post(NEW, typed(delivery__secret=""), follow=True)

    queue = ExportQueue.objects.get(account=tenant.account)
    assert queue.delivery["secret"].startswith("whsec_")
    assert queue.delivery["secret"].encode() in created.content
    assert queue.delivery["secret"].encode() not in owner.get(f"/backoffice/exports/queues/{queue.pk}/edit/").content


def test_the_edit_form_masks_secrets_and_a_masked_value_sent_back_keeps_the_stored_one(tenant, owner):
    queue = make_queue(
        tenant,
        "https://erp.example.com/hook",
        delivery={"auth": {"type": "basic", "username": "erp", "password": "pa55-word-xyz"}},
    )
    page = owner.get(f"/backoffice/exports/queues/{queue.pk}/edit/")
    assert page.status_code == 200
    assert b"pa55-word-xyz" not in page.content and SECRET.encode() not in page.content
    assert page.context["form"]["delivery__headers"].value() == json.dumps({"X-Shop": MASK})  # values are secrets
    assert page.context["form"]["delivery__auth_password"].value() == MASK

    form = page.context["form"]
    data = {name: form[name].value() for name in ("entity_type", "trigger", "transform__type")}
    saved = owner.post(
        f"/backoffice/exports/queues/{queue.pk}/edit/",
        typed(
            **data,
            name="renamed",
            delivery__url="https://erp.example.com/hook",
            delivery__headers={"X-Shop": MASK},
            delivery__secret=MASK,
            delivery__auth_type="basic",
            delivery__auth_username="erp",
            delivery__auth_password=MASK,
        ),
    )

    assert saved.status_code == 302, errors(saved)
    queue.refresh_from_db()
    assert queue.name == "renamed"
    assert queue.delivery["auth"] == {"type": "basic", "username": "erp", "password": "pa55-word-xyz"}
    assert queue.delivery["headers"] == {"X-Shop": "acme"} and queue.delivery["secret"] == SECRET
    assert queue.delivery["read_timeout"] == 2  # a key no field shows is kept
    entry = AuditEntry.objects.filter(target_type="export_queue", target_id=str(queue.pk)).latest("pk")
    assert entry.action == "changed" and entry.changes["name"] == ["orders to webshop", "renamed"]
    assert "pa55-word-xyz" not in json.dumps(entry.changes)


def test_a_mustache_template_previews_on_the_newest_entity_or_the_one_typed_in_escaped(tenant, owner, client):
    import_orders(client, tenant, "first-order", "second-order")
    queue = make_queue(tenant, "https://erp.example.com/hook")
    template = '{{#elements}}{"id": "{{order.order_identifier}}", "x": "<b>"}{{/elements}}'
    form = typed(
        transform__type="mustache",
        transform__template=template,
        transform__content_type="application/json",
        transform__escape="none",
        do="preview",
    )

    newest = owner.post(f"/backoffice/exports/queues/{queue.pk}/edit/", form)

    assert newest.status_code == 200
    preview = newest.context["preview"]
    assert preview["content_type"] == "application/json"
    assert json.loads(preview["content"])["id"] == "second-order"
    assert b"application/json" in newest.content and b"&lt;b&gt;" in newest.content
    queue.refresh_from_db()
    assert queue.transform == {"type": "identity"}  # nothing saved
    (first_id,) = [pk for pk, _key in recent_entities(account=tenant.account, entity_type=queue.entity_type)][-1:]
    chosen = owner.post(f"/backoffice/exports/queues/{queue.pk}/edit/", {**form, "preview_object": str(first_id)})
    assert json.loads(chosen.context["preview"]["content"])["id"] == "first-order"


def test_a_preview_without_a_stored_entity_says_so(tenant, owner):
    queue = make_queue(tenant, "https://erp.example.com/hook")

    answer = owner.post(f"/backoffice/exports/queues/{queue.pk}/edit/", typed(do="preview"))

    assert answer.status_code == 200
    assert "no stored entity" in answer.context["preview"]["error"]
    on_new = owner.post(NEW, typed(do="preview"))
    assert on_new.status_code == 200 and "no stored entity" in on_new.context["preview"]["error"]
    assert list(ExportQueue.objects.filter(account=tenant.account)) == [queue]


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"transform__type": "mustache", "transform__template": "{{#elements}}"}, "transform__template"),
        ({"delivery__url": "https://10.1.2.3/hook"}, "delivery__url"),
        ({"delivery__url": "http://127.0.0.1:9/hook"}, "delivery__url"),
        (
            {
                "delivery__type": "ftp",
                "delivery__host": "ftp.example.com",
                "delivery__username": "erp",
                "delivery__password": "secret-pw",
                "delivery__path": "exports/{date:>400000000}.csv",
            },
            "delivery__path",
        ),
        ({"name": ""}, "name"),
        ({"concurrency": "100000"}, "concurrency"),
    ],
    ids=["bad-template", "private-address", "loopback", "huge-width", "no-name", "concurrency"],
)
def test_bad_input_is_a_form_error_on_its_field(tenant, owner, fields: dict[str, str], field: str):
    answer = owner.post(NEW, typed(**fields))

    assert answer.status_code == 400
    found = errors(answer)
    assert field in found, found
    label = str(answer.context["form"].fields[field].label)
    assert f"{label}: ".encode() in answer.content  # the error names its field on the page
    assert not ExportQueue.objects.filter(account=tenant.account).exists()


def test_a_name_the_account_has_is_a_form_error(tenant, owner):
    make_queue(tenant, "https://erp.example.com/hook", name="orders to erp")

    answer = owner.post(NEW, typed())

    assert answer.status_code == 400 and "name" in errors(answer)


@pytest.mark.usefixtures("allow_loopback")
def test_a_test_send_reaches_the_receiver_and_shows_its_answer(tenant, owner, client, receiver: Receiver):
    import_orders(client, tenant, "sent-order")
    queue = make_queue(tenant, "https://erp.example.com/hook")
    receiver.script = [202]

    answer = owner.post(
        f"/backoffice/exports/queues/{queue.pk}/edit/", typed(receiver.url, delivery__secret=MASK, do="test")
    )

    assert answer.status_code == 200, errors(answer)
    test = answer.context["test"]
    assert test["ok"] and test["status_code"] == 202 and test["answer"] == "ok"
    assert test["delivery_id"].startswith("test_")
    assert b"202" in answer.content and b"ms" in answer.content
    (received,) = receiver.received
    assert b"sent-order" in received.body and received.headers["webhook-id"] == test["delivery_id"]
    queue.refresh_from_db()
    assert queue.delivery["url"] == "https://erp.example.com/hook"  # nothing saved


def test_a_test_send_of_a_queue_not_created_yet_is_refused_and_creates_nothing(tenant, owner):
    answer = owner.post(NEW, typed(do="test"))

    assert answer.status_code == 400 and "Create the queue first" in answer.context["test"]["error"]
    assert not ExportQueue.objects.filter(account=tenant.account).exists()


@pytest.mark.usefixtures("allow_loopback")
def test_a_failed_test_send_shows_the_status_code(tenant, owner, client, receiver: Receiver):
    import_orders(client, tenant, "sent-order")
    queue = make_queue(tenant, receiver.url)
    receiver.script = [500]

    answer = owner.post(f"/backoffice/exports/queues/{queue.pk}/edit/", typed(receiver.url, do="test"))

    test = answer.context["test"]
    assert not test["ok"] and test["status_code"] == 500
    assert b"500" in answer.content


def test_past_the_try_out_limit_a_preview_is_refused_with_a_message(tenant, owner, settings):
    settings.PREVIEW_RATE_LIMIT_PER_KEY = 2
    settings.PREVIEW_RATE_LIMIT_PER_ACCOUNT = 10
    settings.PREVIEW_RATE_WINDOW_SECONDS = 60
    queue = make_queue(tenant, "https://erp.example.com/hook")
    url = f"/backoffice/exports/queues/{queue.pk}/edit/"

    answers = [owner.post(url, typed(do="preview")) for _ in range(3)]

    assert [a.status_code for a in answers[:2]] == [200, 200]
    limited = answers[2]
    assert limited.status_code == 429 and int(limited["Retry-After"]) > 0
    assert b"Too many previews and test sends" in limited.content
    assert "preview" not in limited.context or limited.context["preview"] is None


def test_the_try_out_limit_counts_the_admin_and_the_back_office_of_one_account_together(tenant, sign_in, settings):
    settings.PREVIEW_RATE_LIMIT_PER_KEY = 10
    settings.PREVIEW_RATE_LIMIT_PER_ACCOUNT = 2
    settings.PREVIEW_RATE_WINDOW_SECONDS = 60
    queue = make_queue(tenant, "https://erp.example.com/hook")
    url = f"/backoffice/exports/queues/{queue.pk}/edit/"
    owner, manager = sign_in(tenant.account, "owner"), sign_in(tenant.account, "manager")

    assert owner.post(url, typed(do="preview")).status_code == 200
    assert manager.post(url, typed(do="preview")).status_code == 200
    assert manager.post(url, typed(do="preview")).status_code == 429


def test_an_owner_deletes_a_queue_after_a_confirmation_and_the_deletion_is_audited(tenant, owner):
    queue = make_queue(tenant, "https://erp.example.com/hook")
    url = f"/backoffice/exports/queues/{queue.pk}/delete/"

    confirm = owner.get(url)
    assert confirm.status_code == 200 and b'method="post"' in confirm.content
    assert ExportQueue.objects.filter(pk=queue.pk).exists()

    deleted = owner.post(url)

    assert deleted.status_code == 302 and deleted["Location"] == "/backoffice/exports/queues/"
    assert not ExportQueue.objects.filter(pk=queue.pk).exists()
    entry = AuditEntry.objects.get(target_type="export_queue", target_id=str(queue.pk), action="deleted")
    assert entry.account_id == tenant.account.pk


def test_a_manager_may_and_a_viewer_may_not_create_edit_or_delete(tenant, sign_in):
    queue = make_queue(tenant, "https://erp.example.com/hook")
    viewer = sign_in(tenant.account, "viewer")
    for path in (NEW, f"/backoffice/exports/queues/{queue.pk}/edit/", f"/backoffice/exports/queues/{queue.pk}/delete/"):
        assert viewer.get(path).status_code == 403
        assert viewer.post(path, typed(name="by a viewer")).status_code == 403
    assert ExportQueue.objects.filter(account=tenant.account).count() == 1
    assert b"/exports/queues/new/" not in viewer.get("/backoffice/exports/queues/").content
    assert b"/edit/" not in viewer.get(f"/backoffice/exports/queues/{queue.pk}/").content
    assert not AuditEntry.objects.filter(target_type="export_queue").exists()

    manager = sign_in(tenant.account, "manager")
    assert b"/exports/queues/new/" in manager.get("/backoffice/exports/queues/").content
    assert (
        f"/exports/queues/{queue.pk}/edit/".encode() in manager.get(f"/backoffice/exports/queues/{queue.pk}/").content
    )
    assert manager.post(NEW, typed(name="by a manager")).status_code == 302


def test_another_accounts_queue_is_not_found(tenant, other_tenant, sign_in):
    theirs = make_queue(other_tenant, "https://erp.example.com/hook", name="theirs")
    owner = sign_in(tenant.account, "owner")
    for path in ("edit", "delete"):
        url = f"/backoffice/exports/queues/{theirs.pk}/{path}/"
        assert owner.get(url).status_code == 404
        assert owner.post(url, typed(do="save")).status_code == 404
    assert owner.post(f"/backoffice/exports/queues/{theirs.pk}/edit/", typed(do="test")).status_code == 404
    theirs.refresh_from_db()
    assert theirs.name == "theirs"
