"""``django.contrib.admin`` with this service's site (``config.admin_site.BackOfficeAdminSite``).

A module of its own: Django imports an installed app's configuration before any model is loaded, and the site's
module reads the auth forms and the accounts' memberships, which need the models.
"""

from django.contrib.admin.apps import AdminConfig


class BackOfficeAdminConfig(AdminConfig):
    default_site = "config.admin_site.BackOfficeAdminSite"
