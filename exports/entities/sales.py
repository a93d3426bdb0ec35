"""Sales (spec: Events; Sale). Element key: the sale's ``identifier``, unique in the account."""

from __future__ import annotations

from exports.entities.documents import document_entity
from ledger.models import Sale


def element_key(sale: Sale) -> str:
    return sale.identifier


ENTITY = document_entity(code="sales", model_label="ledger.Sale", element_key="<identifier>", key_of=element_key)
