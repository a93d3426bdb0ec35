"""``manage.py create_api_key ACCOUNT INTEGRATION [--scope imports|pos|admin ...]``.

Creates the account and the integration when missing; the new key is the last line of output.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from accounts import services
from accounts.models import Scope


class Command(BaseCommand):
    help = "Create an API key for an account's integration (both created when missing)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("account")
        parser.add_argument("integration")
        parser.add_argument(
            "--scope",
            action="append",
            choices=Scope.values,
            dest="scopes",
            help="May be repeated; default: imports.",
        )
        parser.add_argument("--name", default="", help="A label for the key.")

    def handle(self, *args: Any, **options: Any) -> None:
        account, integration = services.ensure_account_and_integration(
            account_identifier=options["account"], integration_identifier=options["integration"]
        )
        scopes = options["scopes"] or [Scope.IMPORTS]
        api_key, raw_key = services.create_api_key(
            account=account, integration=integration, scopes=scopes, name=options["name"]
        )
        self.stdout.write(
            f"Created key {api_key.prefix}… for {account.identifier}/{integration.identifier} "
            f"with scopes {', '.join(api_key.scopes)}. It is shown once; store it now."
        )
        self.stdout.write(raw_key)
