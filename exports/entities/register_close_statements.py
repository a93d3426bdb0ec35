"""Register close statements (spec: Events; Register close statement).

Element key: ``"<register identifier>:<sequence_number>"``, unique in the account.
"""

from __future__ import annotations

from core.outbox import EntityType
from exports.entities.documents import document_entity
from ledger.outbox import statement_key as element_key

ENTITY = document_entity(
    code=EntityType.REGISTER_CLOSE_STATEMENTS,
    model_label="ledger.RegisterCloseStatement",
    element_key="<register identifier>:<sequence_number>",
    key_of=element_key,
)
