"""The registry of exportable entity types. Adding one is a module with an ``ENTITY`` and a line here.

The spec names eight types (``core.outbox.EntityType``); each is one module, registered under its code.
"""

from __future__ import annotations

from exports.entities import (
    checkouts,
    incoming_order_state_changes,
    newsletter_signups,
    outgoing_orders,
    product_edit_events,
    register_close_statements,
    sales,
    stock_events,
)
from exports.entities.base import EntityDefinition

REGISTRY: dict[str, EntityDefinition] = {
    module.ENTITY.code: module.ENTITY
    for module in (
        checkouts,
        sales,
        register_close_statements,
        product_edit_events,
        newsletter_signups,
        stock_events,
        incoming_order_state_changes,
        outgoing_orders,
    )
}
