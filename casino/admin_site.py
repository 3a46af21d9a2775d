"""The admin as the casino's people meet it: the service's own name, a "View site" that leads
somewhere, and a first page that says what went wrong tonight (``audit.tonight``).

Django's default site calls itself "Django administration" and links "View
site" to ``/``, where this service has no page. The one site class here is the
project's ``admin.site`` (``casino.apps.CasinoAdminConfig``'s ``default_site``,
installed in place of ``django.contrib.admin``), so every registration stays as it is.
"""

from __future__ import annotations

from django.contrib.admin import AdminSite
from django.http import HttpResponseRedirect
from django.urls import path, reverse, reverse_lazy

from audit.tonight import cases_of, tonight

from .second_factor import LoginForm, proven, second_factor_view


class CasinoAdminSite(AdminSite):
    site_header = "table-audit — casino audit"
    site_title = "table-audit"
    index_title = "Rounds, findings, meters and the audit trail"
    # The service's other face: the API docs, where staff find the read API and the
    # CSV exports. The label stays Django's "View site" so that Django's user links
    # need not be copied into a template of ours.
    site_url = reverse_lazy("docs")
    index_template = "admin/tonight.html"
    # The sidebar of every model repeats the first page's list and takes a fifth of a
    # 1,366-pixel screen from the lists, whose columns need it.
    enable_nav_sidebar = False

    # The sign-in asks for an authenticator's code too (casino.second_factor).
    login_form = LoginForm

    def has_permission(self, request):
        """Django's check, and the second factor proven by whoever must prove one."""
        return super().has_permission(request) and proven(request)

    def login(self, request, extra_context=None):
        """A person signed in with his password who has yet to prove a second factor (his passkey,
        or one he must set up) is taken to do so, not shown the sign-in again."""
        user = request.user
        if (request.method == "GET" and getattr(user, "is_authenticated", False) and user.is_staff
                and not proven(request)):
            return HttpResponseRedirect(reverse("admin:second_factor"))
        return super().login(request, extra_context)

    def get_urls(self):
        return [path("second-factor/", lambda request: second_factor_view(self, request), name="second_factor"),
                *super().get_urls()]

    def index(self, request, extra_context=None):
        """The tonight page above the list of models, for whoever may read rounds and findings."""
        extra_context = dict(extra_context or {})
        if request.user.has_perms(["rounds.view_round", "rounds.view_finding"]):
            extra_context["tonight"] = tonight()
            extra_context["cases"] = cases_of(request.user)
        return super().index(request, extra_context)
