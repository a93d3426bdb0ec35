"""The registry of exportable entity types. Adding one is a module with an ``ENTITY`` and a line here.

The spec names eight types (``exports.models.EntityType``); queues can be configured for all of them.
The POS ledger adds checkouts, sales, register close statements, product edit events, newsletter signups
and stock events as modules of their own.
"""

from __future__ import annotations

from exports.entities import incoming_order_state_changes, outgoing_orders
from exports.entities.base import EntityDefinition

REGISTRY: dict[str, EntityDefinition] = {
    module.ENTITY.code: module.ENTITY for module in (incoming_order_state_changes, outgoing_orders)
}
