"""Where queries go when streaming replicas are configured (``DATABASE_REPLICA_URL``).

Every write goes to the primary, whatever the object was read from: a row
read from a replica and saved again must not be sent to a server that can
only refuse it. Reads go where their code asked (``infra.replicas``); a
read that asked nothing goes to the primary, so only the read paths that
chose a replica, knowing it may lag, ever see one.
"""

from __future__ import annotations

from django.db import DEFAULT_DB_ALIAS


class PrimaryReplicaRouter:
    def db_for_read(self, model, **hints):
        # None: Django keeps a related object on the database its instance came
        # from, and sends everything else to the primary.
        return None

    def db_for_write(self, model, **hints):
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1, obj2, **hints):
        # A replica holds the primary's rows: an object read there and one read here are one database.
        return True

    def allow_migrate(self, db, app_label, **hints):
        # A replica replays the primary's schema; it is never migrated itself.
        return db == DEFAULT_DB_ALIAS
