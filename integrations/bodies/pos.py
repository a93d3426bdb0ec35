"""The request bodies of the integrations' POS API (``integrations.pos_api``), declared once: the declaration
validates a body and is its OpenAPI request schema (``core.declare``)."""

from __future__ import annotations

from core.declare import Body, Field, optional
from core.nodes import Str

TEXT = Str(max_length=1000, allow_blank=True)


class ShippingAddress(Body, schema_name="PosShippingAddress"):
    """The customer's address (every part may be blank)."""

    name = optional(TEXT, description="The recipient's name (blank allowed, at most 1000 characters).")
    street = optional(TEXT, description="The street (blank allowed, at most 1000 characters).")
    city = optional(TEXT, description="The city (blank allowed, at most 1000 characters).")
    postal_code = optional(
        Str(max_length=32, allow_blank=True),
        description="The postal code (blank allowed, at most 32 characters).",
    )
    country = optional(TEXT, description="The country's name (blank allowed, at most 1000 characters).")
    country_code = optional(
        Str(max_length=2, allow_blank=True),
        description="ISO 3166-1 alpha-2 (at most 2 characters); the integration may limit the countries it ships to.",
    )
    email = optional(
        Str(max_length=320, allow_blank=True),
        description="The customer's e-mail address (blank allowed, at most 320 characters).",
    )
    phone = optional(
        Str(max_length=64, allow_blank=True),
        description="The customer's phone number (blank allowed, at most 64 characters).",
    )


class ShippingOptionsRequest(Body, schema_name="PosShippingOptions"):
    """The address to ship to and the shop the sale is made in."""

    address = Field(
        ShippingAddress,
        description="The address to ship to, passed on to the shipping options integration.",
    )
    stock_location = Field(Str(max_length=64), description="The shop (stock location identifier).")
