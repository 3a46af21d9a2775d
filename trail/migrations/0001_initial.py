"""The audit log's models move from the audit app to the trail, keeping their tables.

Only Django's state moves: ``audit_chainhead`` and ``audit_auditevent`` keep
their names, rows, indexes and the triggers that protect them (keyed by table
name, trail/protections.py). The content types move with them, so every
permission granted on the log (and each group's grant) is the same row under
its new app.
"""

from django.db import migrations, models

MOVED = ("auditevent", "chainhead")


def content_types_follow(apps, schema_editor, *, source="audit", target="trail"):
    content_types = apps.get_model("contenttypes", "ContentType")
    permissions = apps.get_model("auth", "Permission")
    for model in MOVED:
        moving = content_types.objects.filter(app_label=source, model=model).first()
        if moving is None:
            continue
        there = content_types.objects.filter(app_label=target, model=model).first()
        if there is None:
            moving.app_label = target
            moving.save(update_fields=["app_label"])
            continue
        # Both exist (a content type made for the target before this ran): every grant of the
        # moving one's permissions goes to the permission of the same codename there.
        for permission in permissions.objects.filter(content_type=moving):
            twin = permissions.objects.filter(content_type=there, codename=permission.codename).first()
            if twin is None:
                permission.content_type = there
                permission.save(update_fields=["content_type"])
                continue
            for group in permission.group_set.all():
                group.permissions.add(twin)
            for user in permission.user_set.all():
                user.user_permissions.add(twin)
            permission.delete()
        moving.delete()


def content_types_return(apps, schema_editor):
    content_types_follow(apps, schema_editor, source="trail", target="audit")


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ("audit", "0019_report_bands"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ChainHead",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False,
                                                   verbose_name="ID")),
                        ("seq", models.PositiveBigIntegerField(default=0)),
                        ("hash", models.CharField(default="0" * 64, max_length=64)),
                    ],
                    options={"verbose_name": "audit chain head", "db_table": "audit_chainhead"},
                ),
                migrations.CreateModel(
                    name="AuditEvent",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False,
                                                   verbose_name="ID")),
                        ("seq", models.PositiveBigIntegerField(unique=True)),
                        ("at", models.DateTimeField()),
                        ("actor_kind", models.CharField(
                            choices=[("user", "User"), ("table", "Table"), ("system", "System")], max_length=8)),
                        ("actor_id", models.CharField(blank=True, max_length=64)),
                        ("actor_name", models.CharField(blank=True, max_length=150)),
                        ("action", models.CharField(max_length=60)),
                        ("object_type", models.CharField(blank=True, max_length=60)),
                        ("object_id", models.CharField(blank=True, max_length=64)),
                        ("object_repr", models.CharField(blank=True, max_length=200)),
                        ("before", models.JSONField(blank=True, null=True)),
                        ("after", models.JSONField(blank=True, null=True)),
                        ("request_id", models.CharField(blank=True, max_length=64)),
                        ("prev_hash", models.CharField(max_length=64)),
                        ("hash", models.CharField(max_length=64)),
                    ],
                    options={
                        "db_table": "audit_auditevent",
                        "ordering": ["-seq"],
                        "indexes": [
                            models.Index(fields=["action", "at"], name="audit_audit_action_d1703a_idx"),
                            models.Index(fields=["object_type", "object_id"], name="audit_audit_object__0e78a5_idx"),
                            models.Index(fields=["at"], name="audit_event_at_idx"),
                        ],
                        "constraints": [models.UniqueConstraint(fields=("hash",), name="audit_event_hash_unique")],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_follow, content_types_return),
    ]
