"""``python manage.py register_table CODE --config NAME``: issue (or rotate) a table's key.

The key is printed as the last line and never stored; only its hash is kept.
"""

from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError

from rounds.models import TableConfig
from rounds.services import table_register
from trail.services import SYSTEM


class Command(BaseCommand):
    help = "Register a table under a configuration and print its new API key (rotates any old key)."

    def add_arguments(self, parser):
        parser.add_argument("code", help="the table's code, as it posts it in 'table'")
        parser.add_argument("--config", required=True, help="a table configuration name, e.g. se-50kr")
        parser.add_argument(
            "--grace-minutes", type=int, default=0,
            help="keep the old key working this long, so the table can switch without downtime",
        )

    def handle(self, *args, code, config, grace_minutes, **options):
        if not TableConfig.objects.filter(name=config).exists():
            names = ", ".join(TableConfig.objects.values_list("name", flat=True)) or "none"
            raise CommandError(f"unknown configuration {config!r}; known: {names}")
        if not code or len(code) > 32:
            raise CommandError("a table code is 1 to 32 characters")
        issued = table_register(
            code=code, config_name=config, actor=SYSTEM, grace=timedelta(minutes=grace_minutes)
        )
        self.stderr.write(f"table {issued.table.code} on {config}: new key (shown once):")
        self.stdout.write(issued.key)
