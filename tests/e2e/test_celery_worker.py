"""The worker fixture itself: a task sent from the test process runs in the worker process."""

from __future__ import annotations

import uuid

import pytest

from config.celery import app
from tests.support.waiting import wait_until
from tests.support.workers import CeleryWorkerProcess

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


def test_worker_runs_a_task_sent_from_the_test_process(celery_worker_process: CeleryWorkerProcess) -> None:
    # celery.accumulate is built in and returns its arguments; results are not stored, so its log line
    # is where the outcome shows.
    marker = f"marker-{uuid.uuid4().hex}"
    result = app.send_task("celery.accumulate", args=(marker,))

    wait_until(
        lambda: f"celery.accumulate[{result.id}] succeeded" in celery_worker_process.log(),
        timeout=30,
        message="the worker to run celery.accumulate",
    )
    assert marker in celery_worker_process.log()


def test_worker_uses_the_test_database_and_a_queue_of_its_own(
    celery_worker_process: CeleryWorkerProcess,
) -> None:
    from django.db import connection

    assert celery_worker_process.database_name == connection.settings_dict["NAME"]
    assert app.conf.task_default_queue == celery_worker_process.queue
    assert f".> {celery_worker_process.queue} " in celery_worker_process.log()


def test_a_test_without_the_fixture_sends_nothing_to_the_session_worker(
    _celery_worker_process_session: CeleryWorkerProcess,
) -> None:
    # The worker is alive (it lives for the session), but this test did not ask for it: what this test sends
    # must not reach it while a later teardown empties the tables under it (the PostgreSQL flush deadlocked).
    assert app.conf.task_default_queue != _celery_worker_process_session.queue
