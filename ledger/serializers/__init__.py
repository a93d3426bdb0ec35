"""Input and output serializers of the ledger's REST API, one module per area."""
