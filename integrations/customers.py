"""The spec's rules on customers from a lookup (spec: Customer, rules 1-3): one place, pure functions.

Used by the customer lookup endpoint (what the POS is told about each customer) and by customer-account
payments (the credit rule is enforced before the integrator is asked to pay).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any


def normalise_balance(customer: Mapping[str, Any]) -> dict[str, Any]:
    """The customer with ``balance`` as a number: the deprecated form ``{"identifier", "balance"}`` (spec:
    Customer, ``balance``) is flattened to its ``balance``."""
    out = dict(customer)
    balance = out.get("balance")
    if isinstance(balance, Mapping):
        out["balance"] = balance.get("balance")
    return out


def credit_refusal(*, customer: Mapping[str, Any], purchase_amount: Decimal) -> str | None:
    """Spec: Customer, rule 1. Why a payment on credit (``invoice`` or customer account) must be refused, or None.
    Only a customer with a ``credit_limit`` is limited: refused when ``purchase_amount - balance > credit_limit`` (a
    missing balance counts as 0). Which payments are on credit is the caller's to know: every payment from a
    customer account is, whatever the POS calls its payment type."""
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
