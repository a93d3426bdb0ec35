"""Sales (spec: Events; Sale). Element key: the sale's ``identifier``, unique in the account."""

from __future__ import annotations

from core.outbox import EntityType
from exports.entities.documents import document_entity
from ledger.outbox import sale_key as element_key

ENTITY = document_entity(
    code=EntityType.SALES, model_label="ledger.Sale", element_key="<identifier>", key_of=element_key
)
