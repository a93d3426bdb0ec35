"""``manage.py bootstrap_demo``: the demo tenant that ``make run`` and the README use.

Account ``demo``, integration ``webshop``, market ``dk`` (DKK), stock location ``shop-1`` and register
``reg-1``; the discount campaign and the deposit rule of ``examples/`` (imported through the import service, so
they are validated as an integrator's would be); the back-office member owner@example.com (password ``owner``),
owner of the account, only while no such person exists; the Django superuser admin/admin only while no superuser
exists; and an API key with every scope. The key is kept in ``VAR_DIR/demo-api-key`` (readable by the owner
only) and reused while it still works, so the README's commands keep working between runs. The last lines
printed, in a box, are the back-office's and the admin's sign-in, the key and a curl command that imports one
order.

It lives in ``ops``, the top layer, because it uses the imports app as well as accounts.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from accounts import selectors
from accounts import services as accounts_services
from accounts.models import Account, Integration, Role, Scope
from campaigns.models import Campaign, ProductRule
from core import jsonparse
from exports import services as exports_services
from exports.models import ExportQueue
from imports import services as imports_services
from imports.models import ImportKind

DEMO_QUEUE = "Demo receiver"
DEMO_ACCOUNT = "demo"
DEMO_INTEGRATION = "webshop"
# The demo account's owner in the back-office, created with this password (as the admin's admin/admin).
DEMO_OWNER = "owner@example.com"
DEMO_OWNER_PASSWORD = "owner"  # noqa: S105 - the demo's, printed by design
EXAMPLES = Path(settings.BASE_DIR) / "examples"
DEMO_DEFINITIONS: tuple[tuple[str, str, str, type[Campaign] | type[ProductRule]], ...] = (
    ("discount_campaigns", "campaigns", ImportKind.DISCOUNT_CAMPAIGN, Campaign),
    ("product_rules", "product_rules", ImportKind.PRODUCT_RULE, ProductRule),
)


def key_file() -> Path:
    return Path(settings.VAR_DIR) / "demo-api-key"


def demo_key(*, account: Account, integration: Integration) -> tuple[str, bool]:
    """The kept demo key while it still authenticates, else a new one (written to the key file). Returns
    ``(raw_key, is_new)``."""
    path = key_file()
    if path.exists():
        kept = path.read_text().strip()
        if selectors.api_key_for_credentials(
            account_identifier=account.identifier, integration_identifier=integration.identifier, raw_key=kept
        ):
            return kept, False
    _, raw_key = accounts_services.create_api_key(
        account=account, integration=integration, scopes=[Scope.IMPORTS, Scope.POS, Scope.ADMIN], name="bootstrap_demo"
    )
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(raw_key + "\n")
    return raw_key, True


def boxed(lines: list[str]) -> str:
    """Lines between two rules as wide as the longest line; the lines themselves stay copyable."""
    rule = "=" * min(max(len(line) for line in lines), 120)
    return "\n".join([rule, *lines, rule])


def demo_queue_config(*, host: str, port: str) -> dict[str, Any]:
    """The demo's export queue: every incoming order's state changes, in real time, to the demo receiver
    (``ops/demo.py``) of this very service, so the first import shows a delivery in the export log."""
    return {
        "name": DEMO_QUEUE,
        "entity_type": "incoming_order_state_changes",
        "trigger": "realtime",
        "enabled": True,
        "transform": {"type": "identity"},
        "delivery": {"type": "webhook", "url": f"http://{host}:{port}/demo/receiver"},
    }


class Command(BaseCommand):
    help = (
        "Create the demo account, shop, register, campaign, deposit rule, back-office owner, admin user and API key "
        "(kept in var/)."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        account, integration = accounts_services.ensure_account_and_integration(
            account_identifier=DEMO_ACCOUNT, integration_identifier=DEMO_INTEGRATION
        )
        shop = accounts_services.ensure_demo_structure(account=account)
        markets = [shop.market]
        for example, key, kind, model in DEMO_DEFINITIONS:
            items = jsonparse.loads((EXAMPLES / f"{example}.json").read_bytes())[key]
            if model.objects.filter(account=account).exists():
                continue  # imported by an earlier run (or replaced by the user's own): not imported again
            outcome = imports_services.import_definitions(
                account=account, integration=integration, kind=kind, markets=markets, items=items
            )
            if outcome.status != "OK":
                raise RuntimeError(f"examples/{example}.json was refused: {outcome.body()}")

        host, _, port = settings.RUN_BIND.rpartition(":")
        if host in ("", "0.0.0.0", "[::]"):  # noqa: S104 - a bind address, mapped to one curl can reach
            host = "127.0.0.1"
        queue_line = self.demo_queue(account=account, host=host, port=port)

        owner_line = self.demo_owner(account=account, host=host, port=port)
        user_model = get_user_model()
        admin_line = "Admin: http://{host}:{port}/admin/ (your superuser)"
        if not user_model.objects.filter(is_superuser=True).exists():
            user_model.objects.create_superuser("admin", "admin@example.com", "admin")
            admin_line = "Admin: http://{host}:{port}/admin/ user admin, password admin (change it before going live)"
        elif user_model.objects.filter(username="admin", is_superuser=True).exists():
            admin_line = "Admin: http://{host}:{port}/admin/ user admin"

        raw_key, is_new = demo_key(account=account, integration=integration)
        query = urlencode(
            {
                "stock_location": shop.identifier,
                "account": account.identifier,
                "integration": integration.identifier,
                "apikey": raw_key,
            }
        )
        curl = " ".join(
            [
                "curl -sS -X POST",
                shlex.quote(f"http://{host}:{port}/imports/incoming_orders?{query}"),
                "-H 'Content-Type: application/json'",
                "-d @examples/incoming_orders.json",
            ]
        )
        state = f"new, kept in {key_file()}" if is_new else f"kept in {key_file()}"
        self.stdout.write(
            boxed(
                [
                    f"Demo account {account.identifier}, integration {integration.identifier}, market dk, "
                    f"stock location {shop.identifier}, register reg-1.",
                    owner_line,
                    admin_line.format(host=host, port=port),
                    queue_line,
                    f"API key (scopes imports, pos, admin; {state}):",
                    raw_key,
                    "Import one order (from the repository's root):",
                    curl,
                ]
            )
        )

    def demo_owner(self, *, account: Account, host: str, port: str) -> str:
        """The demo account's owner in the back-office, created while nobody has the address; the line to print."""
        url = f"Back-office: http://{host}:{port}/backoffice/"
        owner = get_user_model().objects.filter(username=DEMO_OWNER).first()
        if owner is None:
            accounts_services.add_member(
                account=account, email=DEMO_OWNER, role=Role.OWNER, password=DEMO_OWNER_PASSWORD
            )
            return f"{url} e-mail {DEMO_OWNER}, password {DEMO_OWNER_PASSWORD} (change it before going live)"
        if any(m.account.pk == account.pk for m in accounts_services.memberships_of(owner)):
            return f"{url} e-mail {DEMO_OWNER}"
        return f"{url} (as a member of the account: manage.py add_member adds one)"

    def demo_queue(self, *, account: Account, host: str, port: str) -> str:
        if ExportQueue.objects.filter(account=account, name=DEMO_QUEUE).exists():
            return f"Export queue '{DEMO_QUEUE}': orders' state changes to http://{host}:{port}/demo/receiver"
        if not settings.DEMO_RECEIVER:
            return "No demo export queue: the demo receiver is off (DEMO_RECEIVER)"
        exports_services.create_queue(account=account, **demo_queue_config(host=host, port=port))
        return f"Export queue '{DEMO_QUEUE}': orders' state changes to http://{host}:{port}/demo/receiver"
