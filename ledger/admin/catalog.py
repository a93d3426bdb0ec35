"""Admin of the ledger's catalog."""
