from __future__ import annotations

import pytest

from tests.conftest import Tenant
from tests.support.admin import populate


@pytest.fixture
def populated(tenant: Tenant) -> Tenant:
    populate(tenant)
    return tenant
