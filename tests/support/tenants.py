"""Tenants in tests: an account with market `dk`, shop `shop-1` and one integration with a key of each scope
(the fixtures `tenant` and `other_tenant` of tests/conftest.py make one each)."""

from __future__ import annotations

from dataclasses import dataclass

from accounts.models import Account, Integration, Market, StockLocation
from tests.factories import (
    AccountFactory,
    IntegrationFactory,
    MarketFactory,
    StockLocationFactory,
    api_key_for,
)


@dataclass
class Tenant:
    """An account with market ``dk``, shop ``shop-1`` and one integration with keys of each scope."""

    account: Account
    integration: Integration
    market: Market
    stock_location: StockLocation
    imports_key: str
    admin_key: str
    pos_key: str

    def params(self, key: str | None = None, **extra: str) -> dict[str, str]:
        return {
            "account": self.account.identifier,
            "integration": self.integration.identifier,
            "apikey": key or self.imports_key,
            **extra,
        }

    def query(self, key: str | None = None, **extra: str) -> str:
        from urllib.parse import urlencode

        return urlencode(self.params(key, **extra))


def make_tenant(identifier: str = "acme") -> Tenant:
    account = AccountFactory(identifier=identifier)
    integration = IntegrationFactory(account=account, identifier="webshop")
    market = MarketFactory(account=account, identifier="dk")
    shop = StockLocationFactory(account=account, market=market, identifier="shop-1")
    return Tenant(
        account=account,
        integration=integration,
        market=market,
        stock_location=shop,
        imports_key=api_key_for(integration, "imports"),
        admin_key=api_key_for(integration, "admin"),
        pos_key=api_key_for(integration, "pos"),
    )
