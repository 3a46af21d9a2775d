"""A round dealt after it arrived is flagged dealt_in_future; its received_at is the moment it was judged against (no SQL: choices and a Python default)."""

import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('rounds', '0015_list_indexes'),
    ]

    operations = [
        migrations.AlterField(
            model_name='finding',
            name='code',
            field=models.CharField(choices=[('payout_mismatch', 'payout_mismatch'), ('ante_blind_unequal', 'ante_blind_unequal'), ('bet_off_unit', 'bet_off_unit'), ('bet_below_minimum', 'bet_below_minimum'), ('bet_above_maximum', 'bet_above_maximum'), ('play_mismatch', 'play_mismatch'), ('duplicate_card', 'duplicate_card'), ('player_multiple_hands', 'player_multiple_hands'), ('progressive_wager_invalid', 'progressive_wager_invalid'), ('progressive_not_lit', 'progressive_not_lit'), ('aggregate_limit_applied', 'aggregate_limit_applied'), ('progressive_award', 'progressive_award'), ('dealt_in_future', 'dealt_in_future'), ('conflicting_resubmission', 'conflicting_resubmission')], max_length=40),
        ),
        migrations.AlterField(
            model_name='round',
            name='received_at',
            field=models.DateTimeField(default=django.utils.timezone.now),
        ),
    ]
