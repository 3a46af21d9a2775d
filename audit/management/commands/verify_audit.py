"""``python manage.py verify_audit``: walk the audit chain; exit 1 at the first break.

``--expect SEQ:HASH`` is an anchor kept outside the database (the ``anchor``
line an earlier run printed, written down or sent elsewhere): the chain must
still hold that event with that hash, so a chain rewritten and rehashed from
an edited event is caught too.

Then every stored round is read again from the body its table sent
(``rounds.proof``): a round whose stored record, record hash or audit event
says otherwise than its kept body is printed, and the command exits 1.
``--chain-only`` skips that walk.

``--expect-file PATH`` reads the anchors ``audit_anchor`` (and the nightly
task) wrote outside, ``anchors.jsonl`` or a directory holding it: each
line's signature is checked under ``AUDIT_ANCHOR_KEY`` (a forged or edited
file is refused, exit 1), then the latest anchor is checked as ``--expect``.

On PostgreSQL it first checks that every trigger protecting the records is
there and enabled (``audit.protections``): one dropped or disabled is
printed, and the command exits 1 once the rest is verified.
"""

import re

from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from audit.anchors import AnchorRefused, anchors_read
from audit.protections import protections_missing
from audit.selectors import audit_chain_verify

ANCHOR = re.compile(r"(?P<seq>[0-9]+):(?P<hash>[0-9a-f]{64})")


class Command(BaseCommand):
    help = "Verify the hash chain of the audit log and print its last hash and its anchor."

    def add_arguments(self, parser):
        parser.add_argument(
            "--expect", metavar="SEQ:HASH",
            help="an anchor kept outside the database: event SEQ must still have this hash",
        )
        parser.add_argument(
            "--expect-file", metavar="PATH",
            help="anchors written outside (anchors.jsonl, or its directory): signatures checked, the latest must hold",
        )
        parser.add_argument("--chain-only", action="store_true", help="do not read the kept bodies again")

    def handle(self, *args, expect=None, expect_file=None, chain_only=False, **options):
        if expect is not None and expect_file is not None:
            raise CommandError("--expect and --expect-file: give one anchor")
        missing = protections_missing(connection)
        for protection in missing:
            self.stdout.write(f"protection gone: {protection}")
        anchor = None
        if expect_file is not None:
            try:
                anchors = anchors_read(expect_file)
            except AnchorRefused as refused:
                raise CommandError(f"anchor file refused: {refused}") from None
            latest = max(anchors, key=lambda a: a.seq)
            if not latest.signed:
                self.stdout.write(f"anchor {latest.seq} is unsigned (AUDIT_ANCHOR_KEY not set): it proves "
                                  "nothing against whoever can write the file")
            anchor = (latest.seq, latest.hash)
        if expect is not None:
            match = ANCHOR.fullmatch(expect.strip())
            if match is None:
                raise CommandError("--expect is SEQ:HASH, as the 'anchor' line of an earlier run prints it")
            anchor = (int(match["seq"]), match["hash"])
        result = audit_chain_verify(anchor=anchor)
        if not result.ok:
            raise CommandError(
                f"audit chain broken at event {result.break_seq}: {result.problem} "
                f"({result.checked} events verified before it)"
            )
        self.stdout.write(f"audit chain intact: {result.checked} events")
        if anchor is not None:
            self.stdout.write(f"anchor {anchor[0]}:{anchor[1]} holds")
        self.stdout.write(f"last hash: {result.last_hash}")
        self.stdout.write(f"anchor: {result.last_seq}:{result.last_hash}")
        if not chain_only:
            self._bodies()
        if missing:
            raise CommandError(f"{len(missing)} of the database's protections are missing or disabled")
        if connection.vendor == "postgresql":
            self.stdout.write("every protection of the records is in force")

    def _bodies(self) -> None:
        from rounds.proof import bodies_differences  # rounds stand above the audit log

        differences = 0
        for difference in bodies_differences():
            differences += 1
            self.stdout.write(f"round {difference.round_id} (#{difference.round_pk}): {difference.problem}")
        if differences:
            raise CommandError(f"{differences} differences between stored rounds and the bodies their tables sent")
        self.stdout.write("every stored round is what its kept body says")
