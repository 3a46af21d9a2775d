from django.apps import AppConfig
from django.db.models.signals import post_migrate


class TrailConfig(AppConfig):
    name = "trail"
    verbose_name = "Audit trail"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers the records' protection checks for deploys)
        from .privileges import grants_after_the_last_app

        post_migrate.connect(grants_after_the_last_app, dispatch_uid="trail.grants")
