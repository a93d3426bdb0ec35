"""The dashboard's notices: what the members are told by e-mail, shown in the back-office too (a queue disabled
within 24 hours, a destination failing longer than NOTIFY_BREAKER_OPEN_SECONDS), of the member's account only."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from core.models import BreakerState, CircuitBreaker
from exports import circuit
from exports.models import ExportQueue
from tests.support.backoffice import SignIn
from tests.support.queues import make_queue
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


def _dashboard(client: Any) -> str:
    answer = client.get("/backoffice/")
    assert answer.status_code == 200
    return answer.content.decode()


def test_a_disabled_queue_and_a_long_failing_destination_are_notices_of_their_account_only(
    tenant: Tenant, other_tenant: Tenant, sign_in: SignIn, settings: Any
) -> None:
    settings.NOTIFY_BREAKER_OPEN_SECONDS = 900
    off = make_queue(tenant, "https://hooks.example.com/off", name="to the ERP")
    circuit.disable_queue(queue=off, reason="failing for 5 days without a success")
    failing = make_queue(tenant, "https://shop.example.com/orders", name="to the web shop")
    recent = make_queue(tenant, "https://shop.example.com/stock", name="stock feed")
    theirs = make_queue(other_tenant, "https://globex.example.com/hook", name="globex hook")
    now = timezone.now()
    for queue, since in ((failing, now - timedelta(hours=2)), (recent, now - timedelta(minutes=5))):
        key = circuit.key_of(queue)
        assert key is not None
        CircuitBreaker.objects.create(
            key=key, state=BreakerState.OPEN, failures=9, failing_since=since, last_error="HTTP 503"
        )
    CircuitBreaker.objects.create(
        key=circuit.key_of(theirs), state=BreakerState.OPEN, failures=9, failing_since=now - timedelta(hours=3)
    )

    page = _dashboard(sign_in(tenant.account, "viewer"))
    assert "Notices" in page
    assert f'/backoffice/exports/queues/{off.pk}/">to the ERP</a> was disabled' in page
    assert "failing for 5 days without a success" in page
    assert f'/backoffice/exports/queues/{failing.pk}/">to the web shop</a> has been failing' in page
    assert "HTTP 503" in page
    assert "stock feed</a> has been failing" not in page  # failing for 5 minutes only
    assert "globex" not in page


def test_a_queue_disabled_long_ago_is_no_notice(tenant: Tenant, sign_in: SignIn) -> None:
    make_queue(tenant, "https://hooks.example.com/off", name="old", enabled=False)
    ExportQueue.objects.filter(name="old").update(updated_at=timezone.now() - timedelta(days=2))
    assert "Notices" not in _dashboard(sign_in(tenant.account, "owner"))
