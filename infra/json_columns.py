"""Reading less of a JSON column: the database leaves a part out before it is sent.

A page that shows a few parts of a report's summary (``audit.ReconciliationReport``)
has the database read only those (``KeysOf``), so the others are neither sent
nor decoded.
"""

from __future__ import annotations

from django.db.models import Expression, F, JSONField


def _plain(key: str) -> bool:
    """A key safe to write into SQL as it is: letters, digits and underscores."""
    return key.replace("_", "").isalnum()


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
        pairs = [f"'{key}', json_extract({column}, '$.{key}')" for key in self._checked()]
        return f"json_object({', '.join(pairs)})", list(params) * len(self.keys)

    def as_postgresql(self, compiler, connection):
        column, params = compiler.compile(self.column)
        pairs = [f"'{key}', one.value -> '{key}'" for key in self._checked()]
        return (f"(SELECT jsonb_build_object({', '.join(pairs)}) "
                f"FROM (SELECT {column} || '{{}}'::jsonb AS value OFFSET 0) AS one)", list(params))

    def _checked(self) -> list[str]:
        for key in self.keys:
            if not _plain(key):
                raise ValueError(f"{key!r} is not a plain key")
        return self.keys
