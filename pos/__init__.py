"""The POS API face above the domain: endpoints the shop apps call that combine several domain apps.

``baskets`` prices a basket with the campaigns' engine, the catalog of the ledger and the integrator's customer
discounts; campaigns alone cannot, since it sits below ledger's siblings and integrations in the layers.
"""
