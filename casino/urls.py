from django.contrib import admin
from django.urls import include, path, re_path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from casino.health import healthz, readyz
from casino.metrics_endpoint import metrics

urlpatterns = [
    # The audit log moved from the audit app to the trail: links kept in notes, bookmarks and
    # exported reports still reach it.
    re_path(r"^admin/audit/auditevent/(?P<rest>.*)$",
            RedirectView.as_view(url="/admin/trail/auditevent/%(rest)s", query_string=True, permanent=True)),
    path("admin/", admin.site.urls),
    path("api/v1/", include("api.rounds.urls")),
    path("api/v1/", include("api.progressive.urls")),
    path("api/v1/", include("api.audit.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    # Answered first by casino.health.ProbesMiddleware; routed here as well, so they are in the inventory.
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("metrics", metrics, name="metrics"),
]

handler404 = "casino.errors.page_not_found"
handler403 = "casino.errors.permission_denied"
