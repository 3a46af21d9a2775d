from django.apps import AppConfig
from django.db.models.signals import post_migrate


class TrailConfig(AppConfig):
    name = "trail"
    verbose_name = "Audit trail"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers the records' protection checks for deploys)
        from .privileges import grants_after_the_last_app
        from .proof_origins import acts_unproven
        from .record_proofs import RecordProof, record_proof_register

        record_proof_register(RecordProof(
            "acts", acts_unproven, "people's acts written by a process where no person proves who he is",
            "every person's act was written where he proved who he is"))

        post_migrate.connect(grants_after_the_last_app, dispatch_uid="trail.grants")
