"""Each audit event says which process wrote it, as the database saw its connection.

A BEFORE INSERT trigger sets ``origin`` to the connection's
``application_name`` (each of the service's processes names its own,
``infra.process_names``) and ``origin_address`` to its client address,
whatever the inserted row said. The application's role can neither update an
event (``audit_auditevent_append_only``) nor switch the trigger off
(``trail.privileges``), so the columns are the database's account of the
writer. Events from before this migration keep an empty origin.
"""

from django.db import migrations, models

STAMP = """
CREATE FUNCTION audit_auditevent_origin() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.origin := left(coalesce(current_setting('application_name', true), ''), 63);
    NEW.origin_address := inet_client_addr();
    RETURN NEW;
END
$$;
CREATE TRIGGER audit_auditevent_origin_stamped BEFORE INSERT ON audit_auditevent
    FOR EACH ROW EXECUTE FUNCTION audit_auditevent_origin();
"""
UNSTAMP = """
DROP TRIGGER IF EXISTS audit_auditevent_origin_stamped ON audit_auditevent;
DROP FUNCTION IF EXISTS audit_auditevent_origin();
"""


def stamp(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(STAMP, params=None)


def unstamp(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(UNSTAMP, params=None)


class Migration(migrations.Migration):

    dependencies = [
        ("trail", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="auditevent",
            name="origin",
            field=models.CharField(blank=True, default="", max_length=63),
        ),
        migrations.AddField(
            model_name="auditevent",
            name="origin_address",
            field=models.GenericIPAddressField(blank=True, null=True),
        ),
        migrations.AddIndex(
            model_name="auditevent",
            index=models.Index(condition=models.Q(("actor_kind", "user")), fields=["seq"],
                               name="audit_event_people_idx"),
        ),
        migrations.RunPython(stamp, unstamp),
    ]
