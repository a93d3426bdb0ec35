"""Real processes for end-to-end tests: a Celery worker on the test database and the test broker.

``celery_worker_process`` starts one ``celery worker`` subprocess per test session, pointed at the database
that pytest-django created (``DATABASE_NAME``) and at the broker of the settings, on a queue that belongs to
this run alone (``CELERY_TASK_DEFAULT_QUEUE``), so that a worker of another run on the same broker never takes
these tasks; the tasks a test sends go to that queue only while the test uses the fixture. Tests that use it
are marked ``celery_worker`` and ``django_db(transaction=True)``: their data must be committed for the worker to
see it. ``celery_worker_pool`` is a second worker, with two processes
that take tasks at the same time as in production, for the tests about concurrency. ``demo_service`` is ``make
run``'s service (``tests/support/demo_service.py``), one for the session.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.support.demo_service import DemoService
from tests.support.demo_service import demo_service as started_demo_service
from tests.support.waiting import wait_until as _wait_until
from tests.support.workers import CeleryWorkerProcess, running_worker, tasks_to


@pytest.fixture(scope="session")
def _celery_worker_process_session(
    django_db_setup: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[CeleryWorkerProcess]:
    with running_worker(tmp_path_factory.mktemp("celery-worker"), ["--pool=solo"]) as worker:
        yield worker


@pytest.fixture
def celery_worker_process(_celery_worker_process_session: CeleryWorkerProcess) -> Iterator[CeleryWorkerProcess]:
    """A real ``celery worker`` (solo pool) on the test database, ready when the fixture returns; the tasks this
    process sends during the test go to it. Only during the test: the worker lives for the session, and a later
    test's tasks (a checkout's real-time exports) taken by it would run beside that test's teardown, which empties
    the tables (on PostgreSQL one TRUNCATE, which deadlocked with the worker's delivery and failed the flush)."""
    with tasks_to(_celery_worker_process_session.queue):
        yield _celery_worker_process_session


@pytest.fixture(scope="session")
def _celery_worker_pool_session(
    django_db_setup: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[CeleryWorkerProcess]:
    with running_worker(tmp_path_factory.mktemp("celery-worker-pool"), ["--pool=prefork", "--concurrency=2"]) as worker:
        yield worker


@pytest.fixture
def celery_worker_pool(_celery_worker_pool_session: CeleryWorkerProcess) -> Iterator[CeleryWorkerProcess]:
    """A worker with two processes that take tasks at the same time, as ``runall`` runs it in production;
    the tasks this process sends during the test go to it."""
    with tasks_to(_celery_worker_pool_session.queue):
        yield _celery_worker_pool_session


@pytest.fixture(scope="session")
def demo_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoService]:
    """``make run``'s service on the embedded default (SQLite and the embedded broker in a scratch ``VAR_DIR``,
    whatever the suite itself runs on), on a free port; stopped at the end of the session, which fails unless it
    exits 0. Shared: a test finds the other tests' orders and queues in it."""
    with started_demo_service(tmp_path_factory.mktemp("demo-service")) as service:
        yield service


@pytest.fixture
def wait_until() -> Callable[..., Any]:
    """``wait_until(condition, timeout=30.0, message="")``: poll a condition (a DB query) until truthy."""
    return _wait_until


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[Any]:
    """A failing test that used the worker shows the worker's log beside its own output."""
    report = yield
    if report.failed:
        for name in ("celery_worker_process", "celery_worker_pool"):
            worker = getattr(item, "funcargs", {}).get(name)
            if isinstance(worker, CeleryWorkerProcess):
                report.sections.append((f"celery worker log ({name})", worker.log_tail()))
    return report
