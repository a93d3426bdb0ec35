"""How a caller presents its API key, as far as it needs no account: the answer to a wrong one and the query
parameters that carry one. Checking a key needs the account models, so it is ``accounts.authentication``'s."""

from __future__ import annotations

INVALID_CREDENTIALS = "Invalid credentials: check the account, integration and apikey parameters."

# Query parameters that carry a credential. A page link keeps every other parameter (account, integration,
# filters) and drops these: links are logged, cached, pasted and shared, and a key must not travel with them.
SECRET_QUERY_PARAMETERS = ("apikey", "api_key", "accountkey", "token", "access_token", "secret", "password")
