"""Checkouts (spec: Events; Checkout). Element key: the checkout's ``identifier``, unique in the account."""

from __future__ import annotations

from core.outbox import EntityType
from exports.entities.documents import document_entity
from ledger.outbox import checkout_key as element_key

ENTITY = document_entity(
    code=EntityType.CHECKOUTS, model_label="ledger.Checkout", element_key="<identifier>", key_of=element_key
)
