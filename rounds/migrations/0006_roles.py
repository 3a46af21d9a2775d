"""The casino's roles as groups. Their permissions are synced after every
migrate from casino/roles.py (see casino.apps), so they follow new models."""

from django.db import migrations

ROLES = ("table", "auditor", "supervisor", "admin")


def create_groups(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    for name in ROLES:
        Group.objects.get_or_create(name=name)


class Migration(migrations.Migration):
    dependencies = [("rounds", "0005_permissions"), ("auth", "0012_alter_user_first_name_max_length")]
    operations = [migrations.RunPython(create_groups, migrations.RunPython.noop)]
