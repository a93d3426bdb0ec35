from __future__ import annotations

import pytest

from tests.support.admin import populate
from tests.support.tenants import Tenant


@pytest.fixture
def populated(tenant: Tenant) -> Tenant:
    populate(tenant)
    return tenant
