"""Every write of the rounds app goes through one of these functions."""

from .configs import ConfigError, config_numbers_check, config_version_create
from .findings import FindingTransitionError, finding_transition
from .ingest import IngestResult, Received, ingest_round, ingest_rounds, record_hash, submission_refuse
from .tables import IssuedKey, key_hash, split_key, table_register
from .voids import VoidError, round_void

__all__ = [
    "ConfigError",
    "config_numbers_check",
    "config_version_create",
    "FindingTransitionError",
    "IngestResult",
    "IssuedKey",
    "finding_transition",
    "ingest_round",
    "ingest_rounds",
    "key_hash",
    "Received",
    "record_hash",
    "round_void",
    "split_key",
    "submission_refuse",
    "table_register",
    "VoidError",
]
