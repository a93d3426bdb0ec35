"""Clients of the API as a tenant's keys, with the fixtures ``api`` (admin key), ``pos`` (POS key) and ``register``
(register ``reg-1`` in ``shop-1``), and readers of its answers. Registered for every test by the root conftest."""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

import pytest
from rest_framework.response import Response
from rest_framework.test import APIClient

from accounts.models import Register
from tests.factories import RegisterFactory
from tests.support.tenants import Tenant


@dataclass
class AdminApi:
    """Calls /api/v1/ as a tenant's admin key (credentials in the query, as integrators send them)."""

    client: APIClient
    tenant: Tenant

    def url(self, path: str, **params: Any) -> str:
        return f"/api/v1/{path}/?{self.tenant.query(self.tenant.admin_key, **params)}"

    def get(self, path: str, **params: Any) -> Response:
        return self.client.get(self.url(path, **params))

    def post(self, path: str, body: Any = None) -> Response:
        return self.client.post(self.url(path), body, format="json")

    def put(self, path: str, body: Any) -> Response:
        return self.client.put(self.url(path), body, format="json")

    def patch(self, path: str, body: Any) -> Response:
        return self.client.patch(self.url(path), body, format="json")

    def delete(self, path: str) -> Response:
        return self.client.delete(self.url(path))

    def call(self, method: str, path: str, body: Any = None) -> Response:
        """``method`` ("get", "post", "put", "patch", "delete") on ``path``, with ``body`` unless it is a get or a
        delete."""
        if method in ("get", "delete"):
            return getattr(self, method)(path)
        return getattr(self, method)(path, body)


@pytest.fixture
def api(client: APIClient, tenant: Tenant) -> AdminApi:
    return AdminApi(client, tenant)


def results(response: Response) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.json()
    return response.json()["results"]


def error_fields(response: Response) -> set[str]:
    return {e["field"] for e in response.json().get("errors", [])}


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

    def get(self, path: str, **params: str) -> Response:
        """GET with query parameters next to the credentials."""
        extra = f"&{urlencode(params)}" if params else ""
        return self.client.get(self.url(path) + extra)


@pytest.fixture
def pos(client: APIClient, tenant: Tenant) -> PosApi:
    return PosApi(client, tenant)


@pytest.fixture
def register(tenant: Tenant) -> Register:
    """Register ``reg-1`` in ``shop-1`` (market ``dk``, DKK)."""
    return RegisterFactory(account=tenant.account, stock_location=tenant.stock_location, identifier="reg-1")


def errors_of(response: Any) -> dict[str, str]:
    """The answer's errors, field to code."""
    return {e["field"]: e.get("code", "") for e in response.json().get("errors", [])}


def priced(response: Response) -> dict[str, Any]:
    """A 200 answer's body with its fractions as Decimal (a priced basket's amounts)."""
    assert response.status_code == 200, response.content
    return json.loads(response.content, parse_float=Decimal)  # type: ignore[no-any-return]
