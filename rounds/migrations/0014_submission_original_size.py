"""A kept body may be only the first bytes of what was sent: its size as sent beside it."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("rounds", "0013_void_wins_over_flagged")]
    operations = [
        migrations.AddField(
            model_name="submission",
            name="original_size",
            field=models.PositiveBigIntegerField(blank=True, null=True),
        ),
    ]
