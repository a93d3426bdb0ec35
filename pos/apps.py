from django.apps import AppConfig


class PosConfig(AppConfig):
    """The POS endpoints that combine the domain apps (basket pricing); its admin page hangs off the campaigns'
    admin through ``campaigns.admin.CAMPAIGN_TOOLS`` (filled by ``pos.admin``), so campaigns never imports pos."""

    name = "pos"
    verbose_name = "Point of sale"
