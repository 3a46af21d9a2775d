"""The auditors' view of tables, their configurations and every round they sent.

Everything here is read-only for every user: a round, its seats and findings,
a submitted body and a table key are evidence, and configuration versions
are created by services, never edited in place. Importing this package
registers every model admin of the app.
"""

from . import findings, rounds, tables  # noqa: F401
