"""The ledger's writes, one module per area: catalog (products, expenses, newsletter signups), checkouts
(checkouts and sales), registers (register periods and close statements), stock (levels and events)."""
