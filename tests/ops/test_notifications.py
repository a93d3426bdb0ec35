"""Members are mailed, through a real SMTP server on 127.0.0.1, when an export queue is disabled, when a
destination's breaker stays open, and (when they ask for it) a daily digest; once each, only in their account. Every
link in a mail is absolute, ``SITE_URL`` and the page's path naming the mail's account, and opens that page in that
account, whichever account the reader works in."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta

import pytest
from django.conf import settings as django_settings
from django.db import transaction
from django.test import Client
from django.utils import timezone

from accounts import audit
from accounts import services as account_services
from accounts.models import Account, Membership, NotificationKind
from backoffice.members import SESSION_KEY
from core import breaker
from core.models import CircuitBreaker
from exports import circuit
from exports import services as export_services
from exports.models import ExportAttempt, ExportQueue, ExportStatus
from imports.models import ImportItem, ImportStatus
from integrations import runtime
from integrations.models import IntegrationCall, RuntimeIntegration
from ops import notifications, tasks
from ops.models import NotificationSent
from tests.factories import ImportItemFactory
from tests.support.logs import make_attempt, make_call, make_delivery, make_sales_queue
from tests.support.ports import free_port
from tests.support.tenants import Tenant

SITE = "https://backoffice.example.com"
# What every link of acme's mails ends with: the account it opens the page in.
IN_ACME = "?account=acme"


def member(account: Account, role: str, email: str | None = None) -> Membership:
    membership, _ = account_services.add_member(
        account=account, email=email or f"{role}@{account.identifier}.example", role=role
    )
    return membership


@pytest.fixture
def staff(tenant: Tenant) -> dict[str, Membership]:
    return {role: member(tenant.account, role) for role in ("owner", "manager", "viewer")}


@pytest.fixture
def site(settings) -> str:
    settings.SITE_URL = SITE
    return SITE


def links(body: str) -> list[str]:
    """Every link to a back-office page in ``body``, with whatever stands before its path (absolute or not)."""
    return re.findall(r"[^\s()]*/backoffice/[^\s()]*", body)


def signed_in(membership: Membership) -> Client:
    client = Client()
    client.force_login(membership.user, backend="django.contrib.auth.backends.ModelBackend")
    return client


def opened(membership: Membership, link: str, client: Client | None = None) -> str:
    """The page at ``link`` as the member sees it, signed in (the link must be one of ``SITE``, naming an account):
    the account switched to, then the page without the parameter."""
    assert link.startswith(f"{SITE}/backoffice/"), link
    path, query = link.removeprefix(SITE).split("?")
    assert query.startswith("account="), link
    answer = (client or signed_in(membership)).get(link.removeprefix(SITE), follow=True)
    assert answer.redirect_chain == [(path, 302)], link
    assert answer.status_code == 200, link
    return answer.content.decode()


def disable_by_person(queue: ExportQueue, who: Membership) -> None:
    with audit.acting(audit.Actor.person(who.user)):
        export_services.update_queue(account=queue.account, queue=queue, enabled=False)


def open_breaker(queue: ExportQueue, *, failing_for: timedelta) -> str:
    key = circuit.key_of(queue)
    assert key is not None
    for _ in range(int(django_settings.BREAKER_FAILURE_THRESHOLD)):
        breaker.record_failure(key, error="HTTP 503")
    CircuitBreaker.objects.filter(key=key).update(failing_since=timezone.now() - failing_for)
    return key


# --- A queue disabled --------------------------------------------------------------------------------------------


def test_a_queue_disabled_by_a_person_is_mailed_to_owners_and_managers_once(tenant, staff, smtp_server, site):
    queue = make_sales_queue(tenant.account, "erp-sales")
    disable_by_person(queue, staff["owner"])

    first = notifications.notify_problems()
    again = notifications.notify_problems()

    assert sorted(smtp_server.recipients()) == ["manager@acme.example", "owner@acme.example"]
    assert (first.sent, again.sent) == (2, 0)
    message = smtp_server.messages()[0]
    assert "Export queue 'erp-sales' was disabled" in message["Subject"]
    assert "disabled by owner@acme.example" in message.get_content()
    assert links(message.get_content()) == [f"{SITE}/backoffice/exports/queues/{queue.pk}/{IN_ACME}"]
    assert f"The queue: {SITE}/backoffice/exports/queues/{queue.pk}/{IN_ACME}" in message.get_content().splitlines()
    assert "erp-sales" in opened(staff["manager"], links(message.get_content())[0])  # the queue's own page


def test_a_member_of_two_accounts_working_in_the_other_opens_the_mails_queue_in_its_account(
    tenant, other_tenant, smtp_server, site
):
    both = member(tenant.account, "manager", "both@example.com")
    member(other_tenant.account, "owner", "both@example.com")
    queue = make_sales_queue(tenant.account, "erp-sales")
    disable_by_person(queue, both)
    assert notifications.notify_problems().sent == 1
    [link] = links(smtp_server.messages()[0].get_content())
    client = signed_in(both)
    client.post("/backoffice/switch/", {"account": "globex"})
    assert client.get(f"/backoffice/exports/queues/{queue.pk}/").status_code == 404  # not globex's

    page = opened(both, link, client)

    assert "erp-sales" in page and '<option value="acme" selected>' in page
    assert client.session[SESSION_KEY] == "acme"


def test_a_member_who_chose_danish_is_mailed_in_danish_and_the_others_in_english(tenant, staff, smtp_server, site):
    account_services.set_language(user=staff["manager"].user, language="da")
    queue = make_sales_queue(tenant.account, name="erp-sales")
    assert circuit.disable_queue(queue=queue, reason="every delivery has failed for 5 days", actor=audit.SYSTEM)

    assert notifications.notify_problems().sent == 2

    mails = {message["To"]: message for message in smtp_server.messages()}
    danish, english = mails["manager@acme.example"], mails["owner@acme.example"]
    assert danish["Subject"].strip() == "[acme] Eksportkøen 'erp-sales' blev deaktiveret"  # encoded, then folded
    assert "blev deaktiveret af systemet" in danish.get_content()
    assert "Årsag: every delivery has failed for 5 days" in danish.get_content()
    assert f"Køen: {SITE}/backoffice/exports/queues/{queue.pk}/{IN_ACME}" in danish.get_content().splitlines()
    assert english["Subject"] == "[acme] Export queue 'erp-sales' was disabled"
    assert "disabled by the system" in english.get_content()


def test_a_queue_disabled_by_the_system_is_mailed_with_its_reason(tenant, staff, smtp_server):
    queue = make_sales_queue(tenant.account)
    assert circuit.disable_queue(queue=queue, reason="every delivery has failed for 5 days", actor=audit.SYSTEM)

    notifications.notify_problems()

    body = smtp_server.messages()[0].get_content()
    assert "disabled by the system" in body
    assert "every delivery has failed for 5 days" in body


def test_a_queue_turned_off_along_with_other_changes_is_told_too(tenant, staff, smtp_server):
    queue = make_sales_queue(tenant.account)
    with audit.acting(audit.Actor.person(staff["manager"].user)):
        export_services.update_queue(account=tenant.account, queue=queue, enabled=False, name="renamed-hooks")

    assert notifications.notify_problems().sent == 2
    assert "Export queue 'renamed-hooks' was disabled" in smtp_server.messages()[0]["Subject"]


def test_a_rolled_back_disable_sends_nothing(tenant, staff, smtp_server):
    queue = make_sales_queue(tenant.account)
    with pytest.raises(RuntimeError), transaction.atomic():
        disable_by_person(queue, staff["owner"])
        raise RuntimeError("the request failed after the disable")

    assert notifications.notify_problems().sent == 0
    assert smtp_server.recipients() == []


def test_a_queue_disabled_again_after_an_enable_is_told_again(tenant, staff, smtp_server):
    queue = make_sales_queue(tenant.account)
    disable_by_person(queue, staff["owner"])
    notifications.notify_problems()
    circuit.enable_queue(account=tenant.account, queue=queue)
    disable_by_person(queue, staff["manager"])

    notifications.notify_problems()

    assert len(smtp_server.recipients()) == 4


# --- A breaker open too long -------------------------------------------------------------------------------------


def test_a_breaker_open_longer_than_the_setting_is_mailed_once_per_open_period(
    tenant, staff, smtp_server, settings, site
):
    settings.NOTIFY_BREAKER_OPEN_SECONDS = 900
    queue = make_sales_queue(tenant.account, "erp-sales")
    key = open_breaker(queue, failing_for=timedelta(minutes=20))

    first = notifications.notify_problems()
    again = notifications.notify_problems()

    assert (first.sent, again.sent) == (2, 0)
    message = smtp_server.messages()[0]
    assert "https://example.com:443" in message["Subject"]
    body = message.get_content()
    assert f"export queue 'erp-sales' ({SITE}/backoffice/exports/queues/{queue.pk}/{IN_ACME})" in body
    assert links(body) == [f"{SITE}/backoffice/exports/queues/{queue.pk}/{IN_ACME}"]
    assert "HTTP 503" in body

    breaker.record_success(key)  # the period ends; a new one is told again
    open_breaker(queue, failing_for=timedelta(minutes=30))
    assert notifications.notify_problems().sent == 2


def test_a_runtime_integrations_breaker_is_mailed_with_a_link_to_the_integration(tenant, staff, smtp_server, site):
    integration = RuntimeIntegration.objects.create(
        account=tenant.account, kind="customer_lookup", method="GET", url="https://erp.example/customers"
    )
    key = runtime.breaker_key(tenant.account, integration.url)
    assert key is not None
    for _ in range(int(django_settings.BREAKER_FAILURE_THRESHOLD)):
        breaker.record_failure(key, error="timed out")
    CircuitBreaker.objects.filter(key=key).update(failing_since=timezone.now() - timedelta(hours=1))

    assert notifications.notify_problems().sent == 2

    body = smtp_server.messages()[0].get_content()
    link = f"{SITE}/backoffice/integrations/{integration.pk}/{IN_ACME}"
    assert f"runtime integration 'customer_lookup' ({link})" in body
    assert links(body) == [link]
    assert "https://erp.example/customers" in opened(staff["owner"], link)


def test_a_breaker_open_for_less_than_the_setting_is_not_mailed(tenant, staff, smtp_server, settings):
    settings.NOTIFY_BREAKER_OPEN_SECONDS = 900
    open_breaker(make_sales_queue(tenant.account), failing_for=timedelta(minutes=1))

    assert notifications.notify_problems().sent == 0
    assert smtp_server.recipients() == []


# --- The daily digest --------------------------------------------------------------------------------------------


def _yesterday_noon(today: date) -> datetime:
    return datetime.combine(today - timedelta(days=1), time(12), tzinfo=UTC)


def test_the_digest_goes_only_to_members_who_asked_for_it_once_a_day(tenant, staff, smtp_server, settings, site):
    settings.NOTIFY_DIGEST_HOUR = 6
    today = timezone.now().astimezone(UTC).date()
    at = _yesterday_noon(today)
    queue = make_sales_queue(tenant.account, "erp-sales")
    make_delivery(queue, status=ExportStatus.SUCCESS, finished_at=at)
    failed = make_delivery(queue, status=ExportStatus.FAILURE, finished_at=at)
    attempt = make_attempt(failed, ok=False)
    ExportAttempt.objects.filter(pk=attempt.pk).update(started_at=at, error="HTTP 503 from the ERP")
    ImportItemFactory(account=tenant.account, integration=tenant.integration, status=ImportStatus.FAILURE)
    make_call(tenant.account, kind="customer_lookup", ok=False)
    ImportItem.objects.filter(account=tenant.account).update(created_at=at)
    IntegrationCall.objects.filter(account=tenant.account).update(created_at=at)
    account_services.set_notifications(
        account=tenant.account, membership=staff["viewer"], chosen=[NotificationKind.DAILY_DIGEST]
    )
    morning = datetime.combine(today, time(7), tzinfo=UTC)

    first = notifications.notify_digests(now=morning)
    again = notifications.notify_digests(now=morning + timedelta(minutes=15))

    assert (first.sent, again.sent) == (1, 0)
    assert smtp_server.recipients() == ["viewer@acme.example"]
    message = smtp_server.messages()[0]
    assert (today - timedelta(days=1)).isoformat() in message["Subject"]
    body = message.get_content()
    assert "erp-sales: 1 sent, 1 failed" in body
    assert "erp-sales: 1 x HTTP 503 from the ERP" in body
    assert "incoming_order: 1 failure" in body
    assert "customer_lookup: 1 of 1 calls failed" in body
    dashboard, log = f"{SITE}/backoffice/{IN_ACME}", f"{SITE}/backoffice/exports/log/{IN_ACME}"
    assert f"The dashboard: {dashboard} · the export log: {log}" in body
    assert links(body) == [dashboard, log]
    assert "erp-sales" in opened(staff["viewer"], dashboard) and "erp-sales" in opened(staff["viewer"], log)


def test_the_links_follow_site_url_and_the_danish_digest_has_them_too(tenant, staff, smtp_server, settings):
    settings.SITE_URL = "http://localhost:8000"
    settings.NOTIFY_DIGEST_HOUR = 0
    account_services.set_language(user=staff["owner"].user, language="da")
    account_services.set_notifications(
        account=tenant.account, membership=staff["owner"], chosen=[NotificationKind.DAILY_DIGEST]
    )

    assert notifications.notify_digests().sent == 1

    body = smtp_server.messages()[0].get_content()
    assert (
        "Oversigten: http://localhost:8000/backoffice/?account=acme · "
        "eksportloggen: http://localhost:8000/backoffice/exports/log/?account=acme" in body
    )


def test_no_digest_before_the_hour(tenant, staff, smtp_server, settings):
    settings.NOTIFY_DIGEST_HOUR = 6
    account_services.set_notifications(
        account=tenant.account, membership=staff["owner"], chosen=[NotificationKind.DAILY_DIGEST]
    )
    today = timezone.now().astimezone(UTC).date()

    assert notifications.notify_digests(now=datetime.combine(today, time(5, 59), tzinfo=UTC)).sent == 0
    assert notifications.notify_digests(now=datetime.combine(today, time(6), tzinfo=UTC)).sent == 1


# --- Isolation ---------------------------------------------------------------------------------------------------


def test_a_member_of_another_account_never_gets_its_notices(tenant, other_tenant, staff, smtp_server, settings):
    settings.NOTIFY_DIGEST_HOUR = 0
    outsider = member(other_tenant.account, "owner", "boss@globex.example")
    both = member(other_tenant.account, "owner", "both@example.com")
    member(tenant.account, "viewer", "both@example.com")  # a viewer in acme: told nothing of acme by default
    for membership in (outsider, both):
        account_services.set_notifications(
            account=other_tenant.account, membership=membership, chosen=NotificationKind.values
        )
    account_services.set_notifications(
        account=tenant.account, membership=staff["manager"], chosen=NotificationKind.values
    )
    disable_by_person(make_sales_queue(tenant.account, "acme-sales"), staff["owner"])
    open_breaker(make_sales_queue(tenant.account, "acme-hooks"), failing_for=timedelta(hours=1))

    notifications.notify_problems()
    notifications.notify_digests()

    mails = [(str(m["To"]), str(m["Subject"]), m.get_content()) for m in smtp_server.messages()]
    to_acme = [mail for mail in mails if mail[1].startswith("[acme]")]
    assert {to for to, _, _ in to_acme} == {"owner@acme.example", "manager@acme.example"}
    others = [mail for mail in mails if mail not in to_acme]
    # The globex members get their own account's digest only: nothing of acme.
    assert sorted(to for to, _, _ in others) == ["boss@globex.example", "both@example.com"]
    assert all(subject.startswith("[globex] Daily digest") and "acme" not in body for _, subject, body in others)


# --- Failures and bounds -----------------------------------------------------------------------------------------


def test_a_mail_the_relay_refuses_is_logged_and_sent_on_the_next_run(tenant, staff, smtp_server, caplog):
    disable_by_person(make_sales_queue(tenant.account), staff["owner"])
    smtp_server.recorder.data_reply = "451 4.3.0 try again later"

    refused = notifications.notify_problems()

    assert (refused.sent, refused.failed) == (0, 2)
    assert "tried again next run" in caplog.text
    assert not NotificationSent.objects.exists()

    smtp_server.recorder.data_reply = None
    assert notifications.notify_problems().sent == 2
    assert len(smtp_server.recipients()) == 2


def test_an_unreachable_relay_does_not_crash_the_task_and_the_mail_waits(tenant, staff, settings, smtp_server):
    disable_by_person(make_sales_queue(tenant.account), staff["owner"])
    port = settings.EMAIL_PORT
    settings.EMAIL_PORT = free_port()  # nothing listens there

    assert tasks.notify_problems() == 0
    assert not NotificationSent.objects.exists()

    settings.EMAIL_PORT = port
    assert tasks.notify_problems() == 2


def test_a_run_sends_at_most_the_setting_and_the_rest_next_run(tenant, staff, smtp_server, settings):
    settings.NOTIFY_MAX_MAILS_PER_RUN = 1
    disable_by_person(make_sales_queue(tenant.account), staff["owner"])

    first = notifications.notify_problems()
    second = notifications.notify_problems()

    assert (first.sent, first.stopped, second.sent) == (1, True, 1)
    assert sorted(smtp_server.recipients()) == ["manager@acme.example", "owner@acme.example"]


def test_beat_runs_the_notices_every_minute_and_the_digest_every_quarter_hour():
    schedule = django_settings.CELERY_BEAT_SCHEDULE
    assert schedule["ops-notify-problems"] == {"task": "ops.tasks.notify_problems", "schedule": 60.0}
    assert schedule["ops-notify-digests"]["task"] == "ops.tasks.notify_digests"
