from django.db import migrations


def create_head(apps, schema_editor):
    ChainHead = apps.get_model("audit", "ChainHead")
    ChainHead.objects.get_or_create(pk=1, defaults={"seq": 0, "hash": "0" * 64})


class Migration(migrations.Migration):
    dependencies = [("audit", "0001_initial")]
    operations = [migrations.RunPython(create_head, migrations.RunPython.noop)]
