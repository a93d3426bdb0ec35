"""The integrations' declared bodies (``core.declare``): ``answers`` (what each runtime integration kind must
answer, checked before a cashier sees it) and ``pos`` (the bodies of the integrations' POS API)."""
