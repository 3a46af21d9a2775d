"""What each of the service's processes calls its database connections (libpq's ``application_name``).

PostgreSQL writes the connection's name onto every audit event as it is
inserted (trail migration 0002), out of the application's reach: the trail
then says which process wrote each event. A person's act is one the web
service took after he signed in there, or a command that had him prove it;
one written by any other process (``manage.py shell``, a script) names a
person who proved nothing to it (``trail.proof_origins``).

A name is a claim the process makes, not a proof: whoever runs code as the
application can also set the name he likes. What it catches is the act
written from a shell as somebody else, which otherwise leaves a true-looking
event.
"""

from __future__ import annotations

import os

PREFIX = "table-audit"
WEB = f"{PREFIX} web"
WORKER = f"{PREFIX} worker"
BEAT = f"{PREFIX} beat"
# PostgreSQL keeps NAMEDATALEN - 1 bytes of a connection's name.
LONGEST = 63


def command(name: str) -> str:
    """A ``manage.py`` command's connections."""
    return f"{PREFIX} manage.py {name}"[:LONGEST]


def of_command_line(argv: list[str], *, under_tests: bool = False) -> str:
    """The name of the process ``argv`` started: the web (gunicorn, ``runserver``), a Celery
    worker or beat, a named ``manage.py`` command, or the program otherwise.

    The test suite plays the web service's part (its client is the web's requests),
    so under pytest the connections are the web's.
    """
    if under_tests:
        return WEB
    program = os.path.basename(argv[0]) if argv else ""
    if program == "__main__.py":  # python -m celery, python -m gunicorn
        program = os.path.basename(os.path.dirname(argv[0]))
    if "gunicorn" in program:
        return WEB
    if program == "celery":
        return BEAT if "beat" in argv[1:] else WORKER
    if program == "manage.py":
        name = argv[1] if len(argv) > 1 else "help"
        return WEB if name == "runserver" else command(name)
    return f"{PREFIX} {program or 'python'}"[:LONGEST]

# Where a person proves who he is before he acts: the web's sign-in (his password, and his
# second factor where he must give one) and import_counts, which asks both.
PERSONS_PROVEN_IN = frozenset({WEB, command("import_counts")})
