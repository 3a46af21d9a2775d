from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ProgressiveConfig(AppConfig):
    name = "progressive"
    verbose_name = "Progressive pools"

    def ready(self) -> None:
        from trail.record_proofs import RecordProof, record_proof_register

        from .proof_versions import pool_versions_differences, pool_versions_record

        record_proof_register(RecordProof(
            "pool_versions", pool_versions_differences,
            "differences between pool versions and what the audit chain recorded",
            "every pool version is what the audit chain recorded"))

        # The shipped pool is made by a migration, where no chain writer runs: the chain
        # records its version as the migrate that made it ends.
        post_migrate.connect(pool_versions_record, sender=self, dispatch_uid="progressive.pool_versions_record")
