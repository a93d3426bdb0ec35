"""The API toolkit every app's API modules build on, knowing no app.

- ``areas``: ``Area``, an area of the API whose read-only view sets are each declared once (selector,
  serializers, example; the list filters one table of the area);
- ``views``: the view-set bases (``ApiViewSet``, ``ReadsViewSet``, ``ReadOnlyViewSet``, ``WritesViewSet``),
  ``reads`` (a read-only view set's selector, serializers and model named once) and ``optional_slash_paths``
  (the POS route tables);
- ``schema``: the OpenAPI building blocks: the error body and its examples, the credentials' query parameters,
  examples, filter parameters, the schema of a view set that reads or lists-creates-reads-replaces-changes-deletes;
- ``pagination``: ``Pagination``, every list's (``REST_FRAMEWORK["DEFAULT_PAGINATION_CLASS"]``);
- ``errors``: the exception handler (``REST_FRAMEWORK["EXCEPTION_HANDLER"]``) and ``not_found`` (``handler404``);
- ``bodies``: reading a JSON body as the request middleware parsed it;
- ``credentials``: the answer to wrong credentials and the query parameters that carry a key;
- ``fields``: ``by_identifier``, a related row shown by its identifier.

Who the caller is stays in accounts (``accounts.authentication``, ``accounts.scoping``): checking a key and
scoping a query to the caller's account need the account models, which core may not import. Those modules
give ``self.account`` to the bases here (docs/architecture.md, "The API toolkit").
"""

from __future__ import annotations

from core.api.areas import Area
from core.api.bodies import read_json, read_json_body
from core.api.fields import by_identifier
from core.api.schema import (
    AUTH_PARAMETERS,
    INVALID_PAGE,
    ErrorOutputSerializer,
    Example,
    conflict,
    crud_schema,
    error_example,
    error_responses,
    filter_parameter,
    invalid,
    missing_scope,
    read_operations,
    refusal,
    request_example,
    response_example,
)
from core.api.views import ApiViewSet, ReadOnlyViewSet, ReadsViewSet, WritesViewSet, optional_slash_paths, reads

__all__ = [
    "AUTH_PARAMETERS",
    "INVALID_PAGE",
    "ApiViewSet",
    "Area",
    "ErrorOutputSerializer",
    "Example",
    "ReadOnlyViewSet",
    "ReadsViewSet",
    "WritesViewSet",
    "by_identifier",
    "conflict",
    "crud_schema",
    "error_example",
    "error_responses",
    "filter_parameter",
    "invalid",
    "missing_scope",
    "optional_slash_paths",
    "read_json",
    "read_json_body",
    "read_operations",
    "reads",
    "refusal",
    "request_example",
    "response_example",
]
