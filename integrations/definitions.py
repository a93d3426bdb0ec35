"""The request bodies of the integrations' POS API (``integrations.pos_api``), declared once: the declaration
validates a body and is its OpenAPI request schema (``core.declare``)."""

from __future__ import annotations

from core.declare import Body, Field, optional
from core.nodes import Str

TEXT = Str(max_length=1000, allow_blank=True)


class ShippingAddress(Body, schema_name="PosShippingAddress"):
    """The customer's address (every part may be blank)."""

    name = optional(TEXT)
    street = optional(TEXT)
    city = optional(TEXT)
    postal_code = optional(Str(max_length=32, allow_blank=True))
    country = optional(TEXT)
    country_code = optional(Str(max_length=2, allow_blank=True))
    email = optional(Str(max_length=320, allow_blank=True))
    phone = optional(Str(max_length=64, allow_blank=True))


class ShippingOptionsRequest(Body, schema_name="PosShippingOptions"):
    """The address to ship to and the shop the sale is made in."""

    address = ShippingAddress
    stock_location = Field(Str(max_length=64), description="The shop (stock location identifier).")
