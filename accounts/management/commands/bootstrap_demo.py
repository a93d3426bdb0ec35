"""``manage.py bootstrap_demo``: the demo tenant that ``make run`` and the README use.

Account ``demo``, integration ``webshop``, market ``dk`` (DKK) and stock location ``shop-1``; the Django
superuser admin/admin only while no superuser exists; and a new API key with every scope, printed with a
curl command that imports one order. Safe to run again: only the key is new each time.
"""

from __future__ import annotations

import json
import shlex
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from accounts import services
from accounts.models import Scope

DEMO_ACCOUNT = "demo"
DEMO_INTEGRATION = "webshop"
DEMO_ORDER = {
    "orders": [
        {
            "order_identifier": "demo-1",
            "basket": {
                "currency": "DKK",
                "line_items": [{"product_identifier": "p1", "name": "Coffee", "quantity": 1, "price": 25.0}],
            },
        }
    ]
}


class Command(BaseCommand):
    help = "Create the demo account, shop, admin user (if no superuser exists) and a new API key."

    def handle(self, *args: Any, **options: Any) -> None:
        account, integration = services.ensure_account_and_integration(
            account_identifier=DEMO_ACCOUNT, integration_identifier=DEMO_INTEGRATION
        )
        shop = services.ensure_demo_structure(account=account)

        user_model = get_user_model()
        if not user_model.objects.filter(is_superuser=True).exists():
            user_model.objects.create_superuser("admin", "admin@example.com", "admin")
            self.stdout.write("Created the superuser admin (password: admin). Change it before going live.")

        _, raw_key = services.create_api_key(
            account=account,
            integration=integration,
            scopes=[Scope.IMPORTS, Scope.POS, Scope.ADMIN],
            name="bootstrap_demo",
        )
        query = urlencode(
            {
                "stock_location": shop.identifier,
                "account": account.identifier,
                "integration": integration.identifier,
                "apikey": raw_key,
            }
        )
        host, _, port = settings.RUN_BIND.rpartition(":")
        if host in ("", "0.0.0.0", "[::]"):  # noqa: S104 - a bind address, mapped to one curl can reach
            host = "127.0.0.1"
        url = f"http://{host}:{port}/imports/incoming_orders?{query}"
        curl = " ".join(
            [
                "curl -sS -X POST",
                shlex.quote(url),
                "-H 'Content-Type: application/json'",
                "-d",
                shlex.quote(json.dumps(DEMO_ORDER)),
            ]
        )
        self.stdout.write(
            f"Demo account {account.identifier}, integration {integration.identifier}, "
            f"market dk, stock location {shop.identifier}.\n"
            f"New API key (scopes imports, pos, admin; shown once):\n{raw_key}\n\n"
            f"Import one order once `manage.py runall` is up:\n{curl}"
        )
