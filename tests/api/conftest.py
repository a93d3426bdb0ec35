from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from rest_framework.response import Response
from rest_framework.test import APIClient

from tests.conftest import Tenant


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


@pytest.fixture
def api(client: APIClient, tenant: Tenant) -> AdminApi:
    return AdminApi(client, tenant)


def results(response: Response) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.json()
    return response.json()["results"]


def error_fields(response: Response) -> set[str]:
    return {e["field"] for e in response.json().get("errors", [])}
