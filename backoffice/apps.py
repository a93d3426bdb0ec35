from django.apps import AppConfig


class BackofficeConfig(AppConfig):
    """Each retailer's own screens at /backoffice/: members of an account work there, in that account only."""

    name = "backoffice"
    verbose_name = "Back-office"
