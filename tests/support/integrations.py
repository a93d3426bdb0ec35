"""The reference integrator's fixtures (registered for every test by the root conftest):

* ``reference``: a running reference integrator (``tests/support/reference_server.py``: its docstring lists
  the paths, default templates, built-in answers and how to script failures).
* ``configure(kind, path=None, method=None, query=None, body=..., headers=None, timeout=5, transform="",
  enabled=True, account=None)``: stores the tenant's (or ``account``'s) RuntimeIntegration of ``kind`` pointing at
  the reference server, with the kind's defaults (``reference_server.DEFAULTS``) for what is not given, and
  allows 127.0.0.1 for outgoing calls (``OUTBOUND_ALLOWED_NETWORKS``). Returns the RuntimeIntegration.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest

from accounts.models import Account
from integrations import runtime
from tests.support import reference_server
from tests.support.reference_server import ReferenceIntegrator
from tests.support.tenants import Tenant

# A shipping address as a POS sends it (spec: Shipping option request), and the request for shop-1 with it.
SHIPPING_ADDRESS = {
    "name": "Jane Doe",
    "street": "Vestergade 1",
    "city": "København",
    "postal_code": "1456",
    "country": "Denmark",
    "country_code": "DK",
}
SHIPPING_REQUEST = {"stock_location": "shop-1", "address": SHIPPING_ADDRESS}

_UNSET: Any = object()


@pytest.fixture
def reference() -> Iterator[ReferenceIntegrator]:
    with reference_server.running() as state:
        yield state


@pytest.fixture
def configure(reference: ReferenceIntegrator, tenant: Tenant, allow_loopback: None) -> Callable[..., Any]:
    from integrations.models import RuntimeIntegration

    def configure(
        kind: str,
        path: str | None = None,
        method: str | None = None,
        query: dict[str, str] | None = None,
        body: Any = _UNSET,
        headers: dict[str, str] | None = None,
        timeout: Decimal | int | str = 5,
        transform: str = "",
        enabled: bool = True,
        account: Account | None = None,
        url: str | None = None,
    ) -> RuntimeIntegration:
        default_method, default_path, default_query, default_body = reference_server.DEFAULTS[kind]
        integration, _ = RuntimeIntegration.objects.update_or_create(
            account=account or tenant.account,
            kind=kind,
            defaults={
                "enabled": enabled,
                "method": method or default_method,
                "url": url or reference.url + (path or default_path),
                "query": default_query if query is None else query,
                "headers": headers or {},
                "body": default_body if body is _UNSET else body,
                "timeout": Decimal(str(timeout)),
                "transform": transform,
            },
        )
        runtime.forget_configurations()  # saved behind the service's back: as if the memo's seconds had passed
        return integration

    return configure


def pays_sent(reference: ReferenceIntegrator) -> int:
    """How many pay requests (gift card or customer account) the reference integrator received."""
    return len([r for r in reference.requests if r.path.endswith("/pay")])
