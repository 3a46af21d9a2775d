"""``python manage.py audit_anchor``: write the chain's anchor now, as the nightly task does.

Prints the line written. ``--day`` names the gaming day it is written for
(default: the one that ended last).
"""

from datetime import date

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError

from audit.anchors import AnchorRefused, anchor_write
from trail.services import SYSTEM


class Command(BaseCommand):
    help = "Verify the audit chain and write its head, signed, to AUDIT_ANCHOR_PATH and/or AUDIT_ANCHOR_URL."

    def add_arguments(self, parser):
        parser.add_argument("--day", type=date.fromisoformat, metavar="YYYY-MM-DD",
                            help="the gaming day the anchor closes (default: the one that ended last)")

    def handle(self, *args, day=None, **options):
        try:
            written = anchor_write(gaming_day=day, actor=SYSTEM)
        except (ImproperlyConfigured, AnchorRefused, OSError, ValueError) as error:
            raise CommandError(f"no anchor written: {error}") from None
        self.stdout.write(f"anchor {written.anchor.seq}:{written.anchor.hash} of {written.anchor.gaming_day} "
                          f"written to {', '.join(written.written_to)}")
        self.stdout.write(written.line)
