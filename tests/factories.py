"""factory_boy factories for the models; tests build data through these."""

from __future__ import annotations

import factory

from accounts import services as account_services
from accounts.models import Account, Cashier, Integration, Market, Register, StockLocation
from campaigns.models import Campaign, ProductRule
from imports.models import ImportItem, ImportKind, ImportStatus
from orders.models import ExternalOrder, HandlingType, IncomingOrder, OrderStateChange, OutgoingOrder


class AccountFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Account
        django_get_or_create = ("identifier",)

    identifier = factory.Sequence(lambda n: f"account-{n}")
    name = factory.LazyAttribute(lambda o: o.identifier.title())


class IntegrationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Integration

    account = factory.SubFactory(AccountFactory)
    identifier = factory.Sequence(lambda n: f"integration-{n}")


class MarketFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Market

    account = factory.SubFactory(AccountFactory)
    identifier = "dk"
    name = "Denmark"
    currency = "DKK"
    default_taxes = factory.LazyFunction(lambda: [{"name": "VAT", "rate": 0.25, "type": "vat"}])


class StockLocationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = StockLocation

    account = factory.SubFactory(AccountFactory)
    market = factory.SubFactory(MarketFactory, account=factory.SelfAttribute("..account"))
    identifier = factory.Sequence(lambda n: f"shop-{n}")
    name = factory.LazyAttribute(lambda o: f"Shop {o.identifier}")


class RegisterFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Register

    account = factory.SubFactory(AccountFactory)
    stock_location = factory.SubFactory(StockLocationFactory, account=factory.SelfAttribute("..account"))
    identifier = factory.Sequence(lambda n: f"register-{n}")


class CashierFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Cashier

    account = factory.SubFactory(AccountFactory)
    identifier = factory.Sequence(lambda n: f"cashier-{n}")
    display_name = "AB"
    full_name = "Anne Berg"


class OutgoingOrderFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = OutgoingOrder

    account = factory.SubFactory(AccountFactory)
    stock_location = factory.SubFactory(StockLocationFactory, account=factory.SelfAttribute("..account"))
    order_identifier = factory.Sequence(lambda n: f"out-{n}")
    basket = factory.LazyFunction(lambda: {"line_items": [], "total": 0})


def api_key_for(integration: Integration, *scopes: str) -> str:
    """A new raw API key for the integration with the given scopes."""
    _, raw = account_services.create_api_key(
        account=integration.account, integration=integration, scopes=list(scopes) or ["imports"]
    )
    return raw


class IncomingOrderFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = IncomingOrder

    account = factory.SubFactory(AccountFactory)
    stock_location = factory.SubFactory(StockLocationFactory, account=factory.SelfAttribute("..account"))
    order_identifier = factory.Sequence(lambda n: f"in-{n}")
    currency = "DKK"
    basket = factory.LazyFunction(lambda: {"line_items": [], "total": 0})
    handling_type = HandlingType.RESERVE_AND_COLLECT


class ExternalOrderFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ExternalOrder

    account = factory.SubFactory(AccountFactory)
    stock_location = factory.SubFactory(StockLocationFactory, account=factory.SelfAttribute("..account"))
    order_identifier = factory.Sequence(lambda n: f"ext-{n}")
    currency = "DKK"
    basket = factory.LazyFunction(lambda: {"line_items": [], "total": 0})


class OrderStateChangeFactory(factory.django.DjangoModelFactory):
    """A state change of an incoming order (pass ``outgoing_order=..., incoming_order=None`` for the other)."""

    class Meta:
        model = OrderStateChange

    incoming_order = factory.SubFactory(IncomingOrderFactory)
    account = factory.LazyAttribute(lambda o: (o.incoming_order or o.outgoing_order).account)
    outgoing_order = None
    previous_state = "created"
    state = "processing"
    source = OrderStateChange.Source.IMPORT


class CampaignFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Campaign

    account = factory.SubFactory(AccountFactory)
    market = factory.SubFactory(MarketFactory, account=factory.SelfAttribute("..account"))
    campaign_id = factory.Sequence(lambda n: f"campaign-{n}")
    type = "basket_discount"
    name = factory.LazyAttribute(lambda o: f"Campaign {o.campaign_id}")
    display_name = factory.LazyAttribute(lambda o: o.name)
    priority = 1
    definition = factory.LazyFunction(dict)


class ProductRuleFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ProductRule

    account = factory.SubFactory(AccountFactory)
    market = factory.SubFactory(MarketFactory, account=factory.SelfAttribute("..account"))
    rule_id = factory.Sequence(lambda n: f"rule-{n}")
    type = "deposit"
    name = factory.LazyAttribute(lambda o: f"Rule {o.rule_id}")
    display_name = factory.LazyAttribute(lambda o: {"en": o.name})
    tag = factory.Sequence(lambda n: f"tag-{n}")
    price = 1
    definition = factory.LazyFunction(dict)


class ImportItemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ImportItem

    account = factory.SubFactory(AccountFactory)
    integration = factory.SubFactory(IntegrationFactory, account=factory.SelfAttribute("..account"))
    kind = ImportKind.INCOMING_ORDER
    request_id = factory.Faker("uuid4", cast_to=None)
    index = 0
    identifier = factory.Sequence(lambda n: f"item-{n}")
    payload = factory.LazyAttribute(lambda o: {"order_identifier": o.identifier})
    status = ImportStatus.PENDING
