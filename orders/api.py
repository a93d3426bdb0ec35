from rest_framework.routers import SimpleRouter


def register(router: SimpleRouter) -> None:
    """Routes of this app under /api/v1/."""
