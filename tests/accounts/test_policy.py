"""What each role may do, as a table of role x action (accounts.policy is the one place that decides)."""

from __future__ import annotations

import pytest

from accounts import policy
from accounts.models import Role
from accounts.policy import Action

# The table of role x action, written out: Y allowed, - refused.
TABLE = {
    #                              owner manager viewer
    Action.VIEW: "YYY",
    Action.VIEW_AUDIT_LOG: "YY-",
    Action.MANAGE_EXPORT_QUEUES: "YY-",
    Action.MANAGE_INTEGRATIONS: "YY-",
    Action.RETRY_EXPORTS: "YY-",
    Action.MANAGE_PRODUCTS: "YY-",
    Action.MANAGE_EXPENSES: "YY-",
    Action.MANAGE_API_KEYS: "Y--",
    Action.MANAGE_MEMBERS: "Y--",
    Action.MANAGE_ACCOUNT: "Y--",
}
ROLES = ("owner", "manager", "viewer")


def test_the_table_names_every_action_and_the_policy_every_role():
    assert set(TABLE) == set(Action)
    assert set(policy.POLICY) == set(Role.values) == set(ROLES)


@pytest.mark.parametrize(
    ("role", "action", "allowed"),
    [(role, action, marks[i] == "Y") for action, marks in TABLE.items() for i, role in enumerate(ROLES)],
)
def test_role_x_action(role, action, allowed):
    assert policy.allows(role, action) is allowed
    if allowed:
        policy.check(role, action)
    else:
        with pytest.raises(policy.Forbidden) as refused:
            policy.check(role, action)
        assert refused.value.status_code == 403
        assert refused.value.field == "role"


def test_an_unknown_role_may_do_nothing():
    assert not any(policy.allows("admin", action) for action in Action)
