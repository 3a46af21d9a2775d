from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "audit"
    verbose_name = "Audit"

    def ready(self) -> None:
        from rounds import notices

        from trail.record_proofs import RecordProof, record_proof_register

        from .proof_counts import counts_differences
        from .proof_findings import finding_states_unrecorded
        from .tasks import notices_due

        record_proof_register(RecordProof(
            "findings", finding_states_unrecorded, "findings' states not made by an audit event",
            "every worked finding's state is its last audit event's"))
        record_proof_register(RecordProof(
            "counts", counts_differences, "counts not what the audit trail recorded",
            "every count and correction is what the audit trail recorded"))

        # A round stored with a finding that may need a notice: the notices run (inline in the demo).
        notices.due.connect(notices_due, dispatch_uid="audit.notices_due")
