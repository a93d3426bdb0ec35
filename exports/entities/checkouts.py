"""Checkouts (spec: Events; Checkout). Element key: the checkout's ``identifier``, unique in the account."""

from __future__ import annotations

from exports.entities.documents import document_entity
from ledger.models import Checkout


def element_key(checkout: Checkout) -> str:
    return checkout.identifier


ENTITY = document_entity(
    code="checkouts", model_label="ledger.Checkout", element_key="<identifier>", key_of=element_key
)
