"""factory_boy factories for the models; tests build data through these."""

from __future__ import annotations

import factory

from accounts import services as account_services
from accounts.models import Account, Cashier, Integration, Market, Register, StockLocation
from orders.models import OutgoingOrder


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
