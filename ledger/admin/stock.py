"""Admin of the ledger's stock."""
