"""Reading less of a JSON column: the database leaves a part out before it is sent.

A reconciliation report's figures are megabytes on a busy day, most of them
its players; a page that does not show them has the database drop them
(``WithoutKey``), so they are neither sent nor decoded.
"""

from __future__ import annotations

from django.db.models import Expression, F, Func, JSONField, Value


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


class KeysOf(Expression):
    """Only the top-level ``keys`` of ``column``, as one object (a missing key as null).

    PostgreSQL decompresses a large value again for each path read out of it; here the value is
    made once (``|| '{}'``, in a subquery the planner may not fold) and the keys read out of that.
    """

    output_field = JSONField()

    def __init__(self, column: str, keys: list[str]) -> None:
        super().__init__()
        self.column, self.keys = F(column), list(keys)

    def get_source_expressions(self):
        return [self.column]

    def set_source_expressions(self, exprs):
        (self.column,) = exprs

    def resolve_expression(self, query=None, allow_joins=True, reuse=None, summarize=False, for_save=False):
        resolved = self.copy()
        resolved.column = self.column.resolve_expression(query, allow_joins, reuse, summarize, for_save)
        return resolved

    def as_sql(self, compiler, connection):
        column, params = compiler.compile(self.column)
        pairs = ", ".join(f"'{key}', json_extract({column}, '$.{key}')" for key in self._checked())
        return f"json_object({pairs})", list(params) * len(self.keys)

    def as_postgresql(self, compiler, connection):
        column, params = compiler.compile(self.column)
        pairs = ", ".join(f"'{key}', one.value -> '{key}'" for key in self._checked())
        return (f"(SELECT jsonb_build_object({pairs}) FROM (SELECT {column} || '{{}}'::jsonb AS value OFFSET 0) AS one)",
                list(params))

    def _checked(self) -> list[str]:
        for key in self.keys:
            if not key.replace("_", "").isalnum():
                raise ValueError(f"{key!r} is not a plain key")
        return self.keys
