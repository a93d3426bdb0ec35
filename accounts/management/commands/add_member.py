"""``manage.py add_member ACCOUNT EMAIL --role owner|manager|viewer [--password PASSWORD]``.

Creates or updates a member of an existing account (``ACCOUNT`` is its identifier, as ``create_api_key`` takes it);
an unknown account or role is an error and a non-zero exit.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts import services
from accounts.models import Account, Role
from core.errors import ServiceError


class Command(BaseCommand):
    help = "Create or update a member of an account, with a role (owner, manager, viewer)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("account", help="the account's identifier")
        parser.add_argument("email", help="the person's e-mail address: their sign-in name")
        parser.add_argument("--role", required=True, help=f"one of {', '.join(Role.values)}")
        parser.add_argument("--password", default=None, help="sets the person's password")

    def handle(self, *args: Any, **options: Any) -> None:
        account = Account.objects.filter(identifier=options["account"]).first()
        if account is None:
            raise CommandError(f"no account '{options['account']}'")
        try:
            membership, created = services.add_member(
                account=account, email=options["email"], role=options["role"], password=options["password"]
            )
        except ServiceError as exc:
            raise CommandError(exc.message) from None
        person = "new member" if created else "member"
        self.stdout.write(f"{person} {membership.user.get_username()} of {account.identifier}: {membership.role}")
