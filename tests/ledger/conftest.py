"""Shared by the ledger's tests: a tenant with a register and clients for the POS and admin APIs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from rest_framework.response import Response
from rest_framework.test import APIClient

from accounts.models import Register
from tests.api.conftest import AdminApi, api, error_fields, results  # noqa: F401  (shared fixtures/helpers)
from tests.conftest import Tenant
from tests.factories import RegisterFactory


@dataclass
class PosApi:
    """Calls /api/v1/pos/ as a tenant's POS key (credentials in the query, as the apps send them)."""

    client: APIClient
    tenant: Tenant

    def url(self, path: str) -> str:
        return f"/api/v1/pos/{path}?{self.tenant.query(self.tenant.pos_key)}"

    def post(self, path: str, body: Any) -> Response:
        # Serialised here (not by the test client) so Decimals and raw strings go out as the apps send them.
        data = body if isinstance(body, str | bytes) else json.dumps(body, default=str)
        return self.client.post(self.url(path), data, content_type="application/json")


@pytest.fixture
def pos(client: APIClient, tenant: Tenant) -> PosApi:
    return PosApi(client, tenant)


@pytest.fixture
def register(tenant: Tenant) -> Register:
    """Register ``reg-1`` in ``shop-1`` (market ``dk``, DKK)."""
    return RegisterFactory(account=tenant.account, stock_location=tenant.stock_location, identifier="reg-1")
