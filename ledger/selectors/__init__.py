"""The ledger's reads, one module per area; every selector takes the account first."""
