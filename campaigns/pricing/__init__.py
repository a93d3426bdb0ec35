"""The pricing engine: discount campaigns and product rules applied to a basket.

One module per campaign family, each declaring its pricing and its import schema; ``registry`` registers each
spec type code once (and ``campaigns.models.Campaign.type`` takes its choices from it). ``engine.price_basket``
is the applicator loop. This package module imports nothing, so the models can read the registry.
"""
