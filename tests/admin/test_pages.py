"""Every admin page answers, and changelists cost a fixed number of queries however many rows they show."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.contrib import admin
from django.db import connection
from django.db.models import Model
from django.test.utils import CaptureQueriesContext

from accounts.models import Account, ApiKey, AuditEntry, Cashier, Integration, Market, Register, StockLocation
from campaigns.models import Campaign, ProductRule
from imports.models import ImportItem
from orders.models import ExternalOrder, IncomingOrder, OrderStateChange, OutgoingOrder
from tests.support.admin import admin_url, listed, populate
from tests.support.tenants import make_tenant

EDITABLE: list[type[Model]] = [Account, Market, StockLocation, Register, Cashier, Integration, ApiKey]
READ_ONLY: list[type[Model]] = [
    IncomingOrder,
    ExternalOrder,
    OutgoingOrder,
    OrderStateChange,
    Campaign,
    ProductRule,
    ImportItem,
    AuditEntry,  # the tenant's API keys were created through the service, which records them
]
ALL = EDITABLE + READ_ONLY


def model_id(model: type[Model]) -> str:
    return model._meta.label


NOT_IN_THE_ADMIN = {
    "accounts.AuthFailureWindow",  # bookkeeping: failed authentications of the current window, minutes long
    "core.LiveProcess",  # bookkeeping: worker and beat heartbeats, seconds long (the dashboard and /health show them)
    "core.RateWindow",  # bookkeeping: try-outs of the current window (core.ratelimit), a minute long
    "campaigns.PricingVersion",  # bookkeeping: the pricing cache's version token per market
    "integrations.CustomerDiscountsAnswer",  # a cache of integrator answers, seconds long
    "accounts.NotificationPreference",  # each member's own choice, set on their back-office page
    "accounts.PersonPreference",  # each person's own choice (the language), set with the back-office's chooser
    # Shown inline on their parent's page (the export log item, the sale).
    "exports.ExportAttempt",
    "ledger.SaleLine",
    "ledger.SalePayment",
    "ledger.SaleTax",
}


@pytest.mark.parametrize(
    "app_label",
    ["core", "accounts", "orders", "campaigns", "imports", "exports", "ledger", "integrations", "giftcards"],
)
def test_every_model_of_the_app_is_registered(app_label: str) -> None:
    unregistered = [
        m._meta.label
        for m in apps.get_app_config(app_label).get_models()
        if not admin.site.is_registered(m) and m._meta.label not in NOT_IN_THE_ADMIN
    ]
    assert unregistered == []


@pytest.mark.parametrize("model", ALL, ids=model_id)
def test_changelist_answers_200_and_lists_rows(admin_client, populated, model) -> None:
    assert listed(admin_client.get(admin_url(model, "changelist")))


@pytest.mark.parametrize("model", EDITABLE, ids=model_id)
def test_add_page_answers_200(admin_client, populated, model) -> None:
    assert admin_client.get(admin_url(model, "add")).status_code == 200


@pytest.mark.parametrize("model", READ_ONLY, ids=model_id)
def test_add_page_is_refused_for_imported_data(admin_client, populated, model) -> None:
    assert admin_client.get(admin_url(model, "add")).status_code == 403


@pytest.mark.parametrize("model", ALL, ids=model_id)
def test_detail_page_answers_200(admin_client, populated, model) -> None:
    obj = model._default_manager.first()
    assert admin_client.get(admin_url(model, "change", obj.pk)).status_code == 200


@pytest.mark.parametrize("model", ALL, ids=model_id)
def test_changelist_queries_do_not_grow_with_rows(admin_client, db, model) -> None:
    populate(make_tenant("acme"))
    url = admin_url(model, "changelist")
    admin_client.get(url)  # warm the session and content type caches
    with CaptureQueriesContext(connection) as one_account:
        admin_client.get(url)
    for identifier in ("globex", "initech", "umbrella"):
        populate(make_tenant(identifier))
    with CaptureQueriesContext(connection) as four_accounts:
        response = admin_client.get(url)
    assert len(listed(response)) > 1
    assert len(four_accounts) == len(one_account), [q["sql"] for q in four_accounts.captured_queries]
