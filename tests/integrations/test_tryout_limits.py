"""The runtime integrations' test action is a try-out: rate-limited per account and per key (429, Retry-After)."""

from __future__ import annotations

from typing import Any

import pytest

from integrations.models import IntegrationCall
from tests.support.api import AdminApi
from tests.support.reference_server import ReferenceIntegrator

pytestmark = pytest.mark.django_db


def test_test_calls_past_the_keys_limit_answer_429_and_call_nothing(
    api: AdminApi, reference: ReferenceIntegrator, configure: Any, settings: Any
) -> None:
    settings.PREVIEW_RATE_LIMIT_PER_KEY = 2
    integration = configure("shipping_options")
    assert [api.post(f"runtime-integrations/{integration.pk}/test", {}).status_code for _ in range(2)] == [200, 200]
    calls = IntegrationCall.objects.count()

    refused = api.post(f"runtime-integrations/{integration.pk}/test", {})

    assert refused.status_code == 429
    assert int(refused["Retry-After"]) >= 1
    assert refused.json()["status"] == "ERROR"
    assert IntegrationCall.objects.count() == calls
