"""The call log's writer (``integrations.call_log``): a call's row is written after the answer, every call in order
of time, nothing lost when the process stops normally; and the configuration a process remembers
(``INTEGRATION_CONFIG_MEMO_SECONDS``).

The writer uses its own database connection, so these tests commit (``transaction=True``); the other tests of the
suite run inside a transaction, where a call's row is written at once in it."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.db import OperationalError, connection, connections

from accounts.models import Account
from integrations import call_log, runtime, services
from integrations.errors import IntegrationFailed, NotConfigured
from integrations.models import IntegrationCall, RuntimeIntegration
from integrations.runtime import call
from tests.support.reference_server import ReferenceIntegrator
from tests.support.tenants import Tenant

SEARCH = {"search_term": "sweater", "market": "dk", "currency_code": "DKK", "shop_id": "shop-1", "limit": 20}
ROOT = Path(__file__).resolve().parents[2]

committed = pytest.mark.django_db(transaction=True)


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A writer whose thread writes nothing: rows stay pending until ``flush`` (or the exit) writes them."""
    call_log.shutdown()
    monkeypatch.setattr(call_log._Writer, "_run", lambda self: None)
    yield
    call_log.shutdown()


def _logged(tenant: Tenant) -> list[IntegrationCall]:
    return list(IntegrationCall.objects.filter(account=tenant.account).order_by("id"))


def _logged_in_order_of_time(tenant: Tenant) -> int:
    """How many rows the tenant's calls have; they must have been written (ids) in order of ``created_at``."""
    logged = _logged(tenant)
    assert [row.created_at for row in logged] == sorted(row.created_at for row in logged)
    return len(logged)


@committed
def test_a_call_is_logged_after_its_answer(tenant: Tenant, configure: Any, held: None) -> None:
    integration = configure("product_search")

    result = call(account=tenant.account, kind="product_search", values=SEARCH)

    assert (call_log.pending(), _logged(tenant)) == (1, [])
    call_log.flush()
    [logged] = _logged(tenant)
    assert (logged.integration_id, logged.kind, logged.ok, logged.status_code, logged.duration_ms) == (
        integration.pk,
        "product_search",
        True,
        200,
        result.duration_ms,
    )


@committed
def test_the_writer_logs_every_call_of_every_thread_in_order_of_time(tenant: Tenant, configure: Any) -> None:
    configure("product_search")

    def calls() -> None:
        for _ in range(15):
            call(account=tenant.account, kind="product_search", values=SEARCH)
        connections.close_all()  # this thread's connection (the one the configuration was read on)

    threads = [threading.Thread(target=calls) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    call_log.flush()

    assert _logged_in_order_of_time(tenant) == 45


@committed
def test_a_failed_call_is_logged_with_its_error(
    tenant: Tenant, reference: ReferenceIntegrator, configure: Any, held: None
) -> None:
    reference.script["*"] = [(500, {"error": "boom"})]
    configure("product_search")

    with pytest.raises(IntegrationFailed):
        call(account=tenant.account, kind="product_search", values=SEARCH)
    call_log.flush()

    [logged] = _logged(tenant)
    assert (logged.ok, logged.status_code, logged.error) == (False, 500, "the integrator answered HTTP 500: boom")


@pytest.mark.django_db
def test_inside_a_transaction_the_row_is_written_at_once_in_it(tenant: Tenant, configure: Any, held: None) -> None:
    configure("product_search")
    assert connection.in_atomic_block  # the test's own transaction

    call(account=tenant.account, kind="product_search", values=SEARCH)

    assert (call_log.pending(), len(_logged(tenant))) == (0, 1)


@committed
def test_a_batch_the_database_refuses_is_kept_in_order_and_written_later(
    tenant: Tenant, configure: Any, held: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure("product_search")
    for _ in range(3):
        call(account=tenant.account, kind="product_search", values=SEARCH)
    insert = call_log._insert

    def refused(batch: list[IntegrationCall]) -> None:
        raise OperationalError("the database is restarting")

    monkeypatch.setattr(call_log, "_insert", refused)
    with pytest.raises(OperationalError):
        call_log.flush()
    assert call_log.pending() == 3
    monkeypatch.setattr(call_log, "_insert", insert)
    call(account=tenant.account, kind="product_search", values=SEARCH)
    call_log.flush()

    assert _logged_in_order_of_time(tenant) == 4


@committed
def test_past_the_pending_bound_the_caller_writes_its_own_row(
    tenant: Tenant, configure: Any, held: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(call_log, "MAX_PENDING", 2)
    configure("product_search")

    for _ in range(3):
        call(account=tenant.account, kind="product_search", values=SEARCH)

    assert (call_log.pending(), len(_logged(tenant))) == (2, 1)


@committed
def test_the_row_of_a_configuration_deleted_meanwhile_keeps_its_account(
    tenant: Tenant, configure: Any, held: None
) -> None:
    integration = configure("product_search")
    call(account=tenant.account, kind="product_search", values=SEARCH)

    services.delete_runtime_integration(account=tenant.account, integration=integration)
    call_log.flush()

    [logged] = _logged(tenant)
    assert (logged.integration_id, logged.kind, logged.ok) == (None, "product_search", True)


@committed
def test_the_row_of_an_account_deleted_meanwhile_is_dropped_and_the_others_written(
    tenant: Tenant, configure: Any, held: None
) -> None:
    gone = Account.objects.create(identifier="gone", name="Gone")
    configure("product_search")
    configure("product_search", account=gone)
    call(account=tenant.account, kind="product_search", values=SEARCH)
    call(account=gone, kind="product_search", values=SEARCH)

    gone.delete()
    call_log.flush()

    assert len(_logged(tenant)) == 1
    assert IntegrationCall.objects.count() == 1


_CHILD = """
import django
django.setup()
from accounts.models import Account
from integrations import call_log
from integrations.models import IntegrationCall
call_log._Writer._run = lambda self: None  # only the exit can write them
account = Account.objects.get(pk={account_id})
for _ in range(5):
    call_log.record(IntegrationCall(account=account, kind="product_search", ok=True, status_code=200, duration_ms=1))
print(call_log.pending())
"""


@committed
def test_a_process_that_stops_normally_writes_its_pending_rows(tenant: Tenant) -> None:
    database = django_settings.DATABASES["default"]
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "DATABASE_NAME": str(database["NAME"])}

    child = subprocess.run(
        [sys.executable, "-c", _CHILD.format(account_id=tenant.account.pk)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert child.returncode == 0, child.stderr
    assert child.stdout.split() == ["5"]  # all pending when the script ended
    assert len(_logged(tenant)) == 5


# --- the configuration a process remembers ----------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(("memo_seconds", "seen"), [(60, [None, None, "2"]), (0, [None, "2", "2"])])
def test_a_configuration_changed_elsewhere_is_used_once_the_memo_is_over(
    tenant: Tenant, reference: ReferenceIntegrator, configure: Any, settings: Any, memo_seconds: int, seen: list[Any]
) -> None:
    settings.INTEGRATION_CONFIG_MEMO_SECONDS = memo_seconds
    configure("product_search", query={"q": "{search_term}"})
    call(account=tenant.account, kind="product_search", values=SEARCH)
    # Another process saves a change: this one goes on with the configuration it read, until the memo is over.
    RuntimeIntegration.objects.filter(account=tenant.account).update(query={"q": "{search_term}", "v": "2"})

    call(account=tenant.account, kind="product_search", values=SEARCH)
    runtime.forget_configurations()  # as if the memo's seconds had passed
    call(account=tenant.account, kind="product_search", values=SEARCH)

    assert [request.query.get("v") for request in reference.requests] == seen


@pytest.mark.django_db
def test_a_configuration_saved_or_deleted_through_the_service_is_used_at_once_here(
    tenant: Tenant, reference: ReferenceIntegrator, configure: Any, settings: Any
) -> None:
    settings.INTEGRATION_CONFIG_MEMO_SECONDS = 60
    integration = configure("product_search", query={"q": "{search_term}"})
    call(account=tenant.account, kind="product_search", values=SEARCH)

    data = {**{name: getattr(integration, name) for name in services.FIELDS}, "query": {"q": "{search_term}", "v": "2"}}
    services.save_runtime_integration(account=tenant.account, integration=integration, data=data)
    call(account=tenant.account, kind="product_search", values=SEARCH)
    services.delete_runtime_integration(account=tenant.account, integration=integration)

    assert [request.query.get("v") for request in reference.requests] == [None, "2"]
    with pytest.raises(NotConfigured):
        call(account=tenant.account, kind="product_search", values=SEARCH)
