"""Every write of the rounds app goes through one of these functions."""

from .cases import KEEP, CaseError, case_change, case_comment, case_escalate
from .config_approvals import ConfigApprovalError, config_version_approve, config_version_reject
from .configs import ConfigError, config_numbers_check, config_version_create
from .entries import IngestResult, Received, record_hash
from .findings import FindingTransitionError, finding_transition
from .ingest import ingest_round, ingest_rounds
from .placements import PlacementError, round_place
from .submissions import submission_refuse
from .tables import IssuedKey, key_hash, split_key, table_key_lend, table_register, table_video_link_set
from .voids import VoidError, round_void

__all__ = [
    "KEEP",
    "CaseError",
    "ConfigApprovalError",
    "ConfigError",
    "FindingTransitionError",
    "IngestResult",
    "IssuedKey",
    "PlacementError",
    "Received",
    "VoidError",
    "case_change",
    "case_comment",
    "case_escalate",
    "config_numbers_check",
    "config_version_approve",
    "config_version_create",
    "config_version_reject",
    "finding_transition",
    "ingest_round",
    "ingest_rounds",
    "key_hash",
    "record_hash",
    "round_place",
    "round_void",
    "split_key",
    "submission_refuse",
    "table_key_lend",
    "table_register",
    "table_video_link_set",
]
