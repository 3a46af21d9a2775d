"""``python manage.py verify_audit``: walk the audit chain; exit 1 at the first break."""

from django.core.management.base import BaseCommand, CommandError

from audit.selectors import audit_chain_verify


class Command(BaseCommand):
    help = "Verify the hash chain of the audit log and print its last hash."

    def handle(self, *args, **options):
        result = audit_chain_verify()
        if not result.ok:
            raise CommandError(
                f"audit chain broken at event {result.break_seq}: {result.problem} "
                f"({result.checked} events verified before it)"
            )
        self.stdout.write(f"audit chain intact: {result.checked} events")
        self.stdout.write(f"last hash: {result.last_hash}")
