"""The API answers as its own OpenAPI schema says (issue 7, section 4: proof under load and faults).

schemathesis generates requests for every operation of ``/api/schema/`` and sends them to the Django app
through WSGI (in this process, inside the test's database transaction). Each operation is called with a
key of the scope it needs, and the ``account`` and ``integration`` query parameters of a real tenant, so
the generated data reaches the validation and the services instead of stopping at 401. Checks: no server
error (5xx), every status code documented, every content type and JSON body matching the schema.

``SCHEMATHESIS_MAX_EXAMPLES`` (default 5) bounds the examples per operation: the suite runs twice in CI.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis import checks
from schemathesis.specs.openapi import checks as openapi_checks

from config.wsgi import application
from tests.conftest import Tenant, make_tenant

MAX_EXAMPLES = int(os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "5"))

# What "the API matches its schema" means here. schemathesis' other default checks (negative data
# rejection, ignored auth, use after free, ...) judge semantics the schema does not encode.
CHECKS = [
    checks.not_a_server_error,
    openapi_checks.status_code_conformance,
    openapi_checks.content_type_conformance,
    openapi_checks.response_schema_conformance,
]


def scope_for(path: str) -> str:
    if path.startswith("/imports/"):
        return "imports"
    if path.startswith("/api/v1/pos/"):
        return "pos"
    return "admin"


@pytest.fixture
def api_tenant(db: None) -> Tenant:
    return make_tenant("acme")


@pytest.fixture(autouse=True)
def keep_the_test_connection() -> Iterator[None]:
    """The WSGI handler closes the database connection after each request; the test's transaction (and
    SQLite's in-memory database) live on it. Django's own test client disconnects the same receivers."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
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
def test_every_operation_answers_as_documented(case: schemathesis.Case, api_tenant: Tenant) -> None:
    key = {"imports": api_tenant.imports_key, "pos": api_tenant.pos_key, "admin": api_tenant.admin_key}[
        scope_for(case.path)
    ]
    case.query = {
        **(case.query or {}),
        "account": api_tenant.account.identifier,
        "integration": api_tenant.integration.identifier,
        "apikey": key,
    }
    case.headers = {k: v for k, v in (case.headers or {}).items() if k.lower() != "authorization"}
    case.call_and_validate(checks=CHECKS)
