"""The ledger's declared bodies (``core.declare``), one module per area: ``checkouts`` (a checkout, its sales and
their parts), ``catalog`` (products, expenses, newsletter signups), ``registers`` (a period's opening and close,
the cashier) and ``stock`` (stock events)."""
