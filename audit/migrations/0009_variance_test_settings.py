"""The regulators' variance tests as a casino starts with them: COMAR on, Kansas and Ohio off.

The same numbers as ``books.variance_tests.DEFAULTS`` (a
migration imports no app code). Rows that exist are kept: a supervisor's
settings are never overwritten.
"""

from decimal import Decimal

from django.db import migrations

SETTINGS = (
    {"code": "comar", "enabled": True, "threshold": None, "base_hold": None},
    {"code": "kansas", "enabled": False, "threshold": Decimal(3), "base_hold": None},
    {"code": "ohio", "enabled": False, "threshold": Decimal(4), "base_hold": None},
)


def seed(apps, schema_editor):
    VarianceTestSetting = apps.get_model("audit", "VarianceTestSetting")
    for row in SETTINGS:
        VarianceTestSetting.objects.get_or_create(code=row["code"], defaults=row)


class Migration(migrations.Migration):
    dependencies = [("audit", "0008_variance_tests")]
    operations = [migrations.RunPython(seed, migrations.RunPython.noop)]
