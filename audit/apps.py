from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "audit"
    verbose_name = "Audit trail"

    def ready(self) -> None:
        # The reports' admin lives beside the audit log's (audit/admin.py), not in it.
        from django.contrib import admin

        if admin.site.is_registered(self.get_model("ReconciliationReport")):
            return
        from . import admin_reports  # noqa: F401
