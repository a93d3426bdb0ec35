"""What each member role may do in its account: the one place that decides it.

Every screen and service that lets a person act asks ``allows(role, action)`` (or ``check``); nothing else
compares roles. The table, role by role:

* **owner**: everything, including members, API keys and the account's own settings (two-factor required);
* **manager**: export queues, runtime integrations, retries and replays, products, expenses; reads everything but
  members and API keys' secrets (it sees the keys' list) and may read the audit log;
* **viewer**: reads only (not the audit log, which names people and keys).
"""

from __future__ import annotations

from enum import StrEnum

from core.errors import ServiceError

__all__ = ("POLICY", "Action", "Forbidden", "allows", "check")


class Action(StrEnum):
    VIEW = "view"  # every page and list of the account's data
    VIEW_AUDIT_LOG = "view_audit_log"
    MANAGE_EXPORT_QUEUES = "manage_export_queues"  # create, change, preview, test send, enable, disable, delete
    MANAGE_INTEGRATIONS = "manage_integrations"  # runtime integrations: configure, test
    RETRY_EXPORTS = "retry_exports"  # retries and replays
    MANAGE_PRODUCTS = "manage_products"
    MANAGE_EXPENSES = "manage_expenses"
    MANAGE_API_KEYS = "manage_api_keys"  # create (shown once), revoke
    MANAGE_MEMBERS = "manage_members"  # invite, change a role, remove
    MANAGE_ACCOUNT = "manage_account"  # the account's settings: two-factor required, notifications


_MANAGER = frozenset(
    {
        Action.VIEW,
        Action.VIEW_AUDIT_LOG,
        Action.MANAGE_EXPORT_QUEUES,
        Action.MANAGE_INTEGRATIONS,
        Action.RETRY_EXPORTS,
        Action.MANAGE_PRODUCTS,
        Action.MANAGE_EXPENSES,
    }
)

# Role (accounts.models.Role's values) -> the actions it may take.
POLICY: dict[str, frozenset[Action]] = {
    "owner": frozenset(Action),
    "manager": _MANAGER,
    "viewer": frozenset({Action.VIEW}),
}


class Forbidden(ServiceError):
    """The member's role does not allow the action (a 403 in the back-office; never for another account's object,
    which is a 404)."""

    status_code = 403


def allows(role: str, action: Action) -> bool:
    """Whether ``role`` may take ``action``; an unknown role may take none."""
    return action in POLICY.get(role, frozenset())


def check(role: str, action: Action) -> None:
    """Raise ``Forbidden`` unless ``role`` may take ``action``."""
    if not allows(role, action):
        raise Forbidden(f"the role '{role}' may not {action.value.replace('_', ' ')}", field="role", code="forbidden")
