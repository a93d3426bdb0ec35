"""The API answers as its own OpenAPI schema says.

schemathesis generates requests for every operation of ``/api/schema/`` and sends them to the Django app
through WSGI (in this process, inside the test's database transaction). Each operation is called with a
key of the scope it needs, the ``account`` and ``integration`` query parameters of a real tenant, and the
identifiers of real objects in its path (``tests/support/world.py``), so the generated data reaches the
validation and the services instead of stopping at 401 or 404. Checks: no server
error (5xx), every status code documented, every content type and JSON body matching the schema.

``SCHEMATHESIS_MAX_EXAMPLES`` (default 5) bounds the examples per operation: the suite runs twice in CI.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi import checks as openapi_checks

from config.wsgi import application
from tests.support.world import World, build_world

MAX_EXAMPLES = int(os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "5"))


# What "the API matches its schema" means here. schemathesis' other default checks (negative data
# rejection, ignored auth, use after free, ...) judge semantics the schema does not encode.
@schemathesis.check
def no_internal_error(ctx: Any, response: Any, case: schemathesis.Case) -> bool | None:
    """Never a 500. A 502 or 504 is what the POS paths answer (as documented) when the integrator they call is
    unreachable, as the world's is; ``status_code_conformance`` checks every other 5xx is documented."""
    if response.status_code == 500:
        raise AssertionError(f"500 Internal Server Error: {response.text[:300]}")
    return None


CHECKS = [
    no_internal_error,
    openapi_checks.status_code_conformance,
    openapi_checks.content_type_conformance,
    openapi_checks.response_schema_conformance,
]


@pytest.fixture
def world(db: None) -> Iterator[World]:
    """The world, and the test's database connection kept open across the WSGI calls: the WSGI handler closes
    it after each request, but the test's transaction (and SQLite's in-memory database) live on it. Django's
    own test client disconnects the same receivers around each of its requests (the world is built with it),
    so they are disconnected after it."""
    built = build_world()
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield built
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


# Loaded at collection (drf-spectacular builds it from the code, without the database); one test per
# operation, named by method and path.
schema = schemathesis.openapi.from_wsgi("/api/schema/", application)


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=True,  # the same requests on every run: CI failures reproduce
    database=None,  # nothing written to .hypothesis/
    suppress_health_check=list(HealthCheck),
)
def test_every_operation_answers_as_documented(case: schemathesis.Case, world: World) -> None:
    case.query = {**(case.query or {}), **world.query(case.path)}
    if case.path_parameters:
        case.path_parameters = world.path_parameters(case.path, list(case.path_parameters))
    case.headers = {k: v for k, v in (case.headers or {}).items() if k.lower() != "authorization"}
    case.call_and_validate(checks=CHECKS)
