from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ProgressiveConfig(AppConfig):
    name = "progressive"
    verbose_name = "Progressive pools"

    def ready(self) -> None:
        from .proof_versions import pool_versions_record

        # The shipped pool is made by a migration, where no chain writer runs: the chain
        # records its version as the migrate that made it ends.
        post_migrate.connect(pool_versions_record, sender=self, dispatch_uid="progressive.pool_versions_record")
