"""Every route of the back-office REST API under ``/api/v1/``, one router."""

from rest_framework.routers import SimpleRouter

from accounts import api as accounts_api
from campaigns import api as campaigns_api
from exports import api as exports_api
from giftcards import pos_api as giftcards_pos_api
from imports import api as imports_api
from integrations import api as integrations_api
from integrations import pos_api as integrations_pos_api
from ledger import api as ledger_api
from orders import api as orders_api
from pos import pos_api as basket_pos_api

router = SimpleRouter()
router.trailing_slash = "/?"  # with and without the slash; DRF 3.18's constructor only takes a boolean
accounts_api.register(router)
orders_api.register(router)
campaigns_api.register(router)
imports_api.register(router)
exports_api.register(router)
ledger_api.register(router)
integrations_api.register(router)

# The POS API (/api/v1/pos/...): fixed paths, so plain URL patterns before the router's.
urlpatterns = [
    *orders_api.pos_urls,
    *ledger_api.pos_urls,
    *basket_pos_api.urls,
    *integrations_pos_api.pos_urls,
    *giftcards_pos_api.pos_urls,
    *router.urls,
]
