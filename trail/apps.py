from django.apps import AppConfig


class TrailConfig(AppConfig):
    name = "trail"
    verbose_name = "Audit trail"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers the records' protection checks for deploys)
