"""Admin of the ledger's checkouts."""
