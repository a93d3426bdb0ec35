"""Reading the Django admin in tests: the URL of a model's admin view, the rows of a changelist, the key a page shows
once; and `populate`, a row of every model in a tenant's account."""

from __future__ import annotations

import re

from django.db.models import Model
from django.http import HttpResponse
from django.urls import reverse

from tests.factories import (
    CampaignFactory,
    CashierFactory,
    ExternalOrderFactory,
    ImportItemFactory,
    IncomingOrderFactory,
    OrderStateChangeFactory,
    OutgoingOrderFactory,
    ProductRuleFactory,
    RegisterFactory,
)
from tests.support.tenants import Tenant


def populate(tenant: Tenant) -> None:
    """One row of every model in the tenant's account (its keys, market and shop already exist)."""
    account, shop = tenant.account, tenant.stock_location
    RegisterFactory(account=account, stock_location=shop)
    CashierFactory(account=account)
    incoming = IncomingOrderFactory(account=account, stock_location=shop)
    OrderStateChangeFactory(incoming_order=incoming)
    outgoing = OutgoingOrderFactory(account=account, stock_location=shop)
    OrderStateChangeFactory(incoming_order=None, outgoing_order=outgoing)
    ExternalOrderFactory(account=account, stock_location=shop)
    CampaignFactory(account=account, market=tenant.market)
    ProductRuleFactory(account=account, market=tenant.market)
    ImportItemFactory(account=account, integration=tenant.integration, stock_location=shop)


def admin_url(model: type[Model] | Model, view: str, *args: object) -> str:
    opts = model._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_{view}", args=args)


def listed(response: HttpResponse) -> list[Model]:
    """The rows of a changelist response."""
    assert response.status_code == 200
    return list(response.context["cl"].result_list)


def shown_api_key(response: HttpResponse) -> str | None:
    match = re.search(r'<code class="api-key">(rk_[^<]+)</code>', response.content.decode())
    return match.group(1) if match else None
