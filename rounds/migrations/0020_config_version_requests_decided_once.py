"""A configuration version request is decided once, and what was asked never changes.

On PostgreSQL, as a meter adjustment request (progressive 0012): before the
decision only the decision's own columns may change (the generic guard of
audit 0010 keeps the configuration, the numbers, the start and who asked);
after it nothing does; it is never deleted, and its table is never truncated.
"""

from django.db import migrations

from infra.migration_ops import decided_once


class Migration(migrations.Migration):

    dependencies = [
        ("rounds", "0019_config_version_requests"),
        # table_audit_refuse_other_changes and table_audit_refuse_change
        ("audit", "0010_records_protected"),
    ]

    operations = [decided_once(
        table="rounds_configversionrequest", function="rounds_config_request_decided_once",
        what="configuration version request",
        decision=("state", "decided_by_id", "decided_by_name", "decided_at", "decision_note", "version_id"),
    )]
