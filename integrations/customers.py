"""The spec's rules on customers from a lookup (spec: Customer, rules 1-3): one place, pure functions.

Used by the customer lookup endpoint (what the POS is told about each customer) and by customer-account
payments (the credit rule is enforced before the integrator is asked to pay).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

# Rule 1 names "invoice" and "customer account"; the payment type identifiers the POS sends for them.
CREDIT_PAYMENT_TYPES = frozenset({"invoice", "customer_account", "customer account", "customeraccount"})


def normalise_balance(customer: Mapping[str, Any]) -> dict[str, Any]:
    """The customer with ``balance`` as a number: the deprecated form ``{"identifier", "balance"}`` (spec:
    Customer, ``balance``) is flattened to its ``balance``."""
    out = dict(customer)
    balance = out.get("balance")
    if isinstance(balance, Mapping):
        out["balance"] = balance.get("balance")
    return out


def credit_refusal(*, customer: Mapping[str, Any], payment_type: str, purchase_amount: Decimal) -> str | None:
    """Spec: Customer, rule 1. Why this payment must be refused, or None. Only ``invoice`` and customer-account
    payments are limited, and only for a customer with a ``credit_limit``: refused when ``purchase_amount -
    balance > credit_limit`` (a missing balance counts as 0)."""
    if payment_type.lower() not in CREDIT_PAYMENT_TYPES:
        return None
    limit = customer.get("credit_limit")
    if limit is None:
        return None
    balance = Decimal(str(customer.get("balance") or 0))
    if purchase_amount - balance > Decimal(str(limit)):
        return (
            f"the purchase of {purchase_amount} less the balance of {balance} exceeds the credit limit of "
            f"{limit}: choose another payment method"
        )
    return None


def overdue_prompt(customer: Mapping[str, Any]) -> Decimal | None:
    """Spec: Customer, rule 2. The overdue amount the cashier should ask to be deposited, or None."""
    overdue = customer.get("balance_overdue")
    if overdue is None:
        return None
    amount = Decimal(str(overdue))
    return amount if amount > 0 else None
