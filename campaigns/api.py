"""Back-office REST API (``/api/v1/``): discount campaigns and product rules, read-only.

They are written by the import endpoints; the detail URLs use the database id because the spec's ``id``
repeats across markets.
"""

from __future__ import annotations

from typing import Any

from rest_framework.routers import SimpleRouter

from accounts.scoping import ReadOnlyViewSet
from campaigns import selectors
from campaigns.docs import CAMPAIGN_DEFINITION, PRODUCT_RULE_DEFINITION
from campaigns.models import CAMPAIGN_COLUMNS, PRODUCT_RULE_COLUMNS
from campaigns.serializers import (
    CampaignFilterSerializer,
    CampaignOutputSerializer,
    ProductRuleFilterSerializer,
    ProductRuleOutputSerializer,
)
from core.api import Area

CAMPAIGNS = Area(
    "campaigns",
    filters={
        "market": "Only this market (identifier), e.g. dk.",
        "type": "Only this campaign type, e.g. percentage_discount-tag.",
    },
)


def _stored(definition: dict[str, Any], *columns: str, pk: int) -> dict[str, Any]:
    """The API's answer for an imported definition: the row's columns are copied from it (campaigns.services)."""
    at = "2025-01-15T09:30:00Z"
    copied = {column: definition[column] for column in columns}
    return {
        "pk": pk,
        "id": definition["id"],
        "market": "dk",
        **copied,
        "definition": definition,
        "created_at": at,
        "updated_at": at,
    }


CAMPAIGN_EXAMPLE = _stored(CAMPAIGN_DEFINITION, *CAMPAIGN_COLUMNS, pk=42)
PRODUCT_RULE_EXAMPLE = _stored(PRODUCT_RULE_DEFINITION, *PRODUCT_RULE_COLUMNS, pk=9)


@CAMPAIGNS.reads(selectors.campaigns, CampaignOutputSerializer, CampaignFilterSerializer, CAMPAIGN_EXAMPLE)
class CampaignViewSet(ReadOnlyViewSet):
    """Discount campaigns per market, as imported, highest priority first; ``pk`` addresses one, ``id`` is the
    campaign id."""


@CAMPAIGNS.reads(
    selectors.product_rules, ProductRuleOutputSerializer, ProductRuleFilterSerializer, PRODUCT_RULE_EXAMPLE
)
class ProductRuleViewSet(ReadOnlyViewSet):
    """Product rules (container deposits) per market, as imported, by id; ``pk`` addresses one."""


def register(router: SimpleRouter) -> None:
    """Routes of this app under /api/v1/."""
    router.register("campaigns", CampaignViewSet, basename="campaign")
    router.register("product-rules", ProductRuleViewSet, basename="product-rule")
