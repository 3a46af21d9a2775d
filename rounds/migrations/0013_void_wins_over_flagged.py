"""A round reported void is ``void`` even when it also breaks a rule (ROUND_RECORD.md).

Rounds stored before the contract said so were ``flagged``; their findings
stay as they are, only the status follows the rule, so that re-verification
judges them as the engine now does.
"""

from django.db import migrations


def void_wins(apps, schema_editor):
    Round = apps.get_model("rounds", "Round")
    Round.objects.filter(void=True, status="flagged").update(status="void")


class Migration(migrations.Migration):
    dependencies = [("rounds", "0012_money_20_digits")]
    operations = [migrations.RunPython(void_wins, migrations.RunPython.noop)]
