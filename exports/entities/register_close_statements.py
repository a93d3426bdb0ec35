"""Register close statements (spec: Events; Register close statement).

Element key: ``"<register identifier>:<sequence_number>"``, unique in the account.
"""

from __future__ import annotations

from exports.entities.documents import document_entity
from ledger.models import RegisterCloseStatement


def element_key(statement: RegisterCloseStatement) -> str:
    return f"{statement.register.identifier}:{statement.sequence_number}"


ENTITY = document_entity(
    code="register_close_statements",
    model_label="ledger.RegisterCloseStatement",
    element_key="<register identifier>:<sequence_number>",
    key_of=element_key,
)
