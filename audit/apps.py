from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "audit"
    verbose_name = "Audit"

    def ready(self) -> None:
        # The reports', the variance tests' and game protection's admins live
        # beside the audit log's (audit/admin.py), not in it.
        from django.contrib import admin

        if not admin.site.is_registered(self.get_model("ReconciliationReport")):
            from . import admin_reports  # noqa: F401
        if not admin.site.is_registered(self.get_model("VarianceFinding")):
            from . import admin_variance  # noqa: F401
        if not admin.site.is_registered(self.get_model("ProtectionFinding")):
            from . import admin_protection  # noqa: F401
