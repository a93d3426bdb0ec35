"""The operations dashboard in the admin: backlog per queue, failures in the last 24 h, slowest integrations."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.utils import timezone

from core.models import LiveProcess
from exports.models import ExportDelivery, ExportStatus
from imports.models import ImportItem, ImportKind, ImportStatus
from ops.admin import DASHBOARD_PERMISSIONS
from ops.health import this_host
from ops.services import hold_beat_lease
from tests.factories import ImportItemFactory
from tests.support.logs import make_attempt, make_call, make_delivery, make_item, make_sales_queue

pytestmark = pytest.mark.django_db

URL = "/admin/dashboard/"


def test_the_admin_index_links_to_the_dashboard(admin_client) -> None:
    response = admin_client.get("/admin/")
    assert response.status_code == 200
    assert f'href="{URL}"' in response.content.decode()


def test_the_dashboard_answers_200_when_everything_is_empty(admin_client) -> None:
    response = admin_client.get(URL)
    assert response.status_code == 200
    assert "No export queues." in response.content.decode()


def test_an_anonymous_visitor_is_sent_to_the_login_page() -> None:
    response = Client().get(URL)
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def test_staff_without_the_log_permissions_is_refused(client) -> None:
    user = User.objects.create_user("clerk", password="pw-123456789", is_staff=True)
    client.force_login(user)
    assert client.get(URL).status_code == 403


def test_staff_with_the_log_permissions_sees_it(client) -> None:
    user = User.objects.create_user("ops", password="pw-123456789", is_staff=True)
    for perm in DASHBOARD_PERMISSIONS:
        app_label, codename = perm.split(".")
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))
    client.force_login(user)
    assert client.get(URL).status_code == 200


def test_the_backlog_per_queue_with_its_oldest_pending_age(admin_client, tenant, other_tenant) -> None:
    hooks = make_sales_queue(tenant.account, "hooks")
    make_item(hooks, age=timedelta(minutes=5))
    make_item(hooks)
    make_item(hooks, status=ExportStatus.SUCCESS)
    make_sales_queue(other_tenant.account, "files")
    backlog = {(q.account, q.queue): q for q in admin_client.get(URL).context["backlog"]}
    assert backlog[("acme", "hooks")].pending == 2
    assert 290 < backlog[("acme", "hooks")].oldest_pending_age_seconds < 400
    assert backlog[("globex", "files")].pending == 0


def test_export_failures_of_the_last_24_hours_by_queue(admin_client, tenant) -> None:
    hooks = make_sales_queue(tenant.account, "hooks")
    make_delivery(hooks, status=ExportStatus.FAILURE)
    make_delivery(hooks, status=ExportStatus.FAILURE)
    make_delivery(hooks, status=ExportStatus.FAILURE, finished_at=timezone.now() - timedelta(hours=25))
    make_delivery(hooks, status=ExportStatus.SUCCESS)
    make_attempt(make_delivery(hooks), ok=False)
    response = admin_client.get(URL)
    failures = response.context["export_failures"]
    assert [(f.account, f.source, f.count) for f in failures] == [("acme", "hooks", 2)]
    assert response.context["failed_attempts"] == 1


def test_import_failures_of_the_last_24_hours_by_kind(admin_client, tenant) -> None:
    for status in (ImportStatus.FAILURE, ImportStatus.REJECTED, ImportStatus.REJECTED, ImportStatus.SUCCESS):
        ImportItemFactory(account=tenant.account, integration=tenant.integration, status=status)
    old = ImportItemFactory(account=tenant.account, integration=tenant.integration, status=ImportStatus.FAILURE)
    ImportItem.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=2))
    failures = admin_client.get(URL).context["import_failures"]
    kind = ImportKind.INCOMING_ORDER.value
    assert [(f.source, f.status, f.count) for f in failures] == [(kind, "rejected", 2), (kind, "failure", 1)]


def test_the_slowest_integrations_by_p95_slowest_first(admin_client, tenant) -> None:
    for ms in range(1, 101):  # 1..100 ms: the nearest-rank p95 is 95
        make_call(tenant.account, kind="product_search", duration_ms=ms)
    for ms in (300, 310, 320):
        make_call(tenant.account, kind="customer_lookup", duration_ms=ms, ok=ms != 320)
    slowest = admin_client.get(URL).context["slowest"]
    assert [(i.kind, i.p95_ms, i.calls, i.failures, i.max_ms) for i in slowest] == [
        ("customer_lookup", 320, 3, 1, 320),
        ("product_search", 95, 100, 0, 100),
    ]


def test_calls_older_than_24_hours_are_left_out_of_the_slowest(admin_client, tenant) -> None:
    from integrations.models import IntegrationCall

    make_call(tenant.account, kind="shipping_options", duration_ms=9000)
    IntegrationCall.objects.update(created_at=timezone.now() - timedelta(hours=25))
    assert admin_client.get(URL).context["slowest"] == []


def test_the_page_shows_the_numbers(admin_client, tenant) -> None:
    hooks = make_sales_queue(tenant.account, "web-hooks-<b>")
    make_item(hooks)
    make_call(tenant.account, kind="customer_lookup", duration_ms=432)
    html = admin_client.get(URL).content.decode()
    assert "web-hooks-&lt;b&gt;" in html  # escaped
    assert '<td class="p95">432</td>' in html
    assert '<td class="pending">1</td>' in html


def test_the_dashboard_queries_do_not_grow_with_queues(admin_client, tenant, django_assert_max_num_queries) -> None:
    for n in range(10):
        make_item(make_sales_queue(tenant.account, f"q{n}"))
    admin_client.get(URL)
    # 12 for the tables, 8 for the health checks and the process list, 1 for the operator's two-factor device: a
    # constant, whatever the queues.
    with django_assert_max_num_queries(21):
        assert admin_client.get(URL).status_code == 200


def test_the_dashboard_shows_the_health_checks_and_names_what_they_count(admin_client, tenant) -> None:
    now = timezone.now()
    for pid, kind, seen in ((11, "worker", now - timedelta(seconds=90)), (12, "beat", now), (13, "beat", now)):
        LiveProcess.objects.create(
            name=f"{this_host()}:{pid}", kind=kind, hostname=this_host(), pid=pid, started_at=seen, seen_at=seen
        )
    hold_beat_lease(holder=f"{this_host()}:12", seconds=30)
    stalled = make_delivery(make_sales_queue(tenant.account, "order-states"), status=ExportStatus.PENDING)
    ExportDelivery.objects.filter(pk=stalled.pk).update(next_attempt_at=now - timedelta(seconds=900))

    page = admin_client.get(URL).content.decode()
    health = page[page.index('id="health"') : page.index('id="processes"')]
    assert "Health: error (workers, export_queues)" in health  # no heartbeat yet: not ready, and degraded
    assert "no worker process alive on any machine" in health
    processes = page[page.index('id="processes"') : page.index('id="overdue-queues"')]
    assert processes.count("<strong>stopped</strong>") == 1
    assert processes.count(">active<") == 1 and processes.count(">standby<") == 1
    overdue = page[page.index('id="overdue-queues"') : page.index('id="export-backlog"')]
    assert "order-states" in overdue  # the operator, logged in, sees which queue
