from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from casino.health import healthz, readyz
from casino.metrics_endpoint import metrics
from casino.moved import AuditLogMoved

urlpatterns = [
    re_path(r"^admin/audit/auditevent/(?P<rest>.*)$", AuditLogMoved.as_view()),
    path("admin/passkeys/", include("casino.passkeys")),  # the second factor's WebAuthn ceremonies
    path("admin/", admin.site.urls),
    path("api/v1/", include("api.rounds.urls")),
    path("api/v1/", include("api.progressive.urls")),
    path("api/v1/", include("api.audit.urls")),
    path("api/v1/", include("api.tokens")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    # Answered first by casino.health.ProbesMiddleware; routed here as well, so they are in the inventory.
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("metrics", metrics, name="metrics"),
]

handler404 = "casino.errors.page_not_found"
handler403 = "casino.errors.permission_denied"
