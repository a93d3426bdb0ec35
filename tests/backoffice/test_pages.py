"""The back-office: sign-in, the account a member works in, scoping to it, and what each role may do."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts import services as account_services
from exports.models import ExportItem, ExportQueue, ExportStatus
from tests.support.backoffice import PASSWORD, SignIn
from tests.support.imports import import_orders
from tests.support.queues import make_queue

pytestmark = pytest.mark.django_db


def test_sign_in_takes_the_e_mail_in_any_case_and_leads_to_the_dashboard(tenant):
    account_services.add_member(account=tenant.account, email="ann@example.com", role="viewer", password=PASSWORD)
    client = Client()
    page = client.get("/backoffice/")
    assert page.status_code == 302 and page["Location"].startswith("/backoffice/login/")
    signed = client.post("/backoffice/login/", {"username": " Ann@Example.COM ", "password": PASSWORD})
    assert signed.status_code == 302 and signed["Location"] == "/backoffice/"
    dashboard = client.get("/backoffice/")
    assert dashboard.status_code == 200
    assert b"ann@example.com" in dashboard.content
    wrong = Client().post("/backoffice/login/", {"username": "ann@example.com", "password": "nope"})
    assert wrong.status_code == 200 and b"errorlist" in wrong.content


def test_a_person_of_no_account_is_told_so(tenant, django_user_model):
    stray = django_user_model.objects.create_user(username="stray@example.com", password=PASSWORD)
    client = Client()
    client.force_login(stray, backend="django.contrib.auth.backends.ModelBackend")
    assert client.get("/backoffice/").status_code == 403


def test_a_member_sees_only_their_accounts_queues_and_another_accounts_are_not_found(
    tenant, other_tenant, sign_in: SignIn
):
    mine = make_queue(tenant, "https://example.com/mine", name="mine")
    theirs = make_queue(other_tenant, "https://example.com/theirs", name="theirs")
    client = sign_in(tenant.account, "viewer")
    listing = client.get("/backoffice/exports/queues/")
    assert b"mine" in listing.content and b"theirs" not in listing.content
    assert client.get(f"/backoffice/exports/queues/{mine.pk}/").status_code == 200
    assert client.get(f"/backoffice/exports/queues/{theirs.pk}/").status_code == 404
    assert client.post(f"/backoffice/exports/queues/{theirs.pk}/disable/").status_code in (403, 404)


def test_a_viewer_may_not_disable_a_queue_and_a_manager_may(tenant, sign_in: SignIn):
    queue = make_queue(tenant, "https://example.com/hook")
    viewer = sign_in(tenant.account, "viewer")
    assert viewer.post(f"/backoffice/exports/queues/{queue.pk}/disable/").status_code == 403
    assert ExportQueue.objects.get(pk=queue.pk).enabled
    manager = sign_in(tenant.account, "manager")
    assert manager.post(f"/backoffice/exports/queues/{queue.pk}/disable/").status_code == 302
    assert not ExportQueue.objects.get(pk=queue.pk).enabled
    assert manager.post(f"/backoffice/exports/queues/{queue.pk}/enable/").status_code == 302
    assert ExportQueue.objects.get(pk=queue.pk).enabled
    assert manager.get(f"/backoffice/exports/queues/{queue.pk}/enable/").status_code == 405


def test_the_export_log_filters_pages_and_retries_only_the_accounts_failed_items(
    tenant, other_tenant, client, sign_in: SignIn, settings
):
    queue = make_queue(tenant, "https://example.com/hook")
    other = make_queue(other_tenant, "https://example.com/other")
    import_orders(client, tenant, *[f"o{n}" for n in range(7)])
    import_orders(client, other_tenant, "x")
    ExportItem.objects.filter(queue=queue).update(status=ExportStatus.FAILURE, message="HTTP 503")
    ExportItem.objects.filter(queue=other).update(status=ExportStatus.FAILURE)
    member = sign_in(tenant.account, "manager")
    page = member.get("/backoffice/exports/log/", {"status": "failure"})
    assert page.status_code == 200 and page.content.count(b'name="item"') == 7
    first = member.get("/backoffice/exports/log/", {"status": "failure"})
    assert b"Older" not in first.content  # seven fit one page
    theirs = ExportItem.objects.get(queue=other)
    assert member.get(f"/backoffice/exports/log/{theirs.pk}/").status_code == 404
    chosen = list(ExportItem.objects.filter(queue=queue).values_list("pk", flat=True)[:2])
    retried = member.post("/backoffice/exports/retry/", {"item": [*chosen, theirs.pk]})
    assert retried.status_code == 302
    assert ExportItem.objects.filter(pk__in=chosen, status=ExportStatus.PENDING).count() == 2
    assert ExportItem.objects.get(pk=theirs.pk).status == ExportStatus.FAILURE
    viewer = sign_in(tenant.account, "viewer")
    assert viewer.post("/backoffice/exports/retry/", {"item": chosen}).status_code == 403


def test_the_switcher_moves_a_member_of_two_accounts_and_ignores_an_account_not_theirs(
    tenant, other_tenant, sign_in: SignIn
):
    make_queue(tenant, "https://example.com/a", name="acme-queue")
    make_queue(other_tenant, "https://example.com/b", name="globex-queue")
    client = sign_in(tenant.account, "owner", email="both@example.com")
    account_services.add_member(account=other_tenant.account, email="both@example.com", role="viewer")
    assert b"acme-queue" in client.get("/backoffice/exports/queues/").content
    client.post("/backoffice/switch/", {"account": other_tenant.account.identifier})
    listing = client.get("/backoffice/exports/queues/")
    assert b"globex-queue" in listing.content and b"acme-queue" not in listing.content
    stranger = sign_in(tenant.account, "viewer", email="one@example.com")
    stranger.post("/backoffice/switch/", {"account": other_tenant.account.identifier})
    assert b"acme-queue" in stranger.get("/backoffice/exports/queues/").content
