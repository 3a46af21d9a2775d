from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "audit"
    verbose_name = "Audit"

    def ready(self) -> None:
        from rounds import notices

        from .tasks import notices_due

        # A round stored with a finding that may need a notice: the notices run (inline in the demo).
        notices.due.connect(notices_due, dispatch_uid="audit.notices_due")
