"""Reading less of a JSON column: the database leaves a part out before it is sent.

A reconciliation report's figures are megabytes on a busy day, most of them
its players; a page that does not show them has the database drop them
(``WithoutKey``), so they are neither sent nor decoded.
"""

from __future__ import annotations

from django.db.models import F, Func, JSONField, Value


class WithoutKey(Func):
    """``column`` without its top-level ``key`` (PostgreSQL ``jsonb - text``, SQLite ``json_remove``)."""

    output_field = JSONField()

    def __init__(self, column: str, key: str) -> None:
        self.key = key
        super().__init__(F(column), Value(key))

    def as_postgresql(self, compiler, connection, **extra):
        return self.as_sql(compiler, connection, template="(%(expressions)s::text)", arg_joiner=" - ", **extra)

    def as_sqlite(self, compiler, connection, **extra):
        column, _ = self.get_source_expressions()
        path = Func(column, Value(f"$.{self.key}"), function="json_remove", output_field=JSONField())
        return path.as_sql(compiler, connection, **extra)
