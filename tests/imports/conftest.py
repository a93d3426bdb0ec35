from __future__ import annotations

from collections.abc import Iterator

import pytest

from config.celery import app as celery_app


@pytest.fixture
def eager_celery() -> Iterator[None]:
    """Run Celery tasks in-process (the real worker is covered by tests/e2e)."""
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = previous
