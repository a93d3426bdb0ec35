"""Admin of the ledger's registers."""
