"""The admin as the casino's people meet it: the service's own name, and a "View site" that leads somewhere.

Django's default site calls itself "Django administration" and links "View
site" to ``/``, where this service has no page. The one site class here is the
project's ``admin.site`` (``default_site`` below, installed in place of
``django.contrib.admin``), so every registration stays as it is.
"""

from __future__ import annotations

from django.contrib.admin import AdminSite
from django.contrib.admin.apps import AdminConfig
from django.urls import reverse_lazy


class CasinoAdminSite(AdminSite):
    site_header = "table-audit — casino audit"
    site_title = "table-audit"
    index_title = "Rounds, findings, meters and the audit trail"
    # The service's other face: the API docs, where staff find the read API and the
    # CSV exports. The label stays Django's "View site" so that Django's user links
    # need not be copied into a template of ours.
    site_url = reverse_lazy("docs")


class CasinoAdminConfig(AdminConfig):
    default_site = "casino.admin_site.CasinoAdminSite"
