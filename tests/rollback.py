"""A block of a test's writes that is undone at its end."""

from __future__ import annotations

from django.db import transaction


def rolled_back_block() -> transaction.Atomic:
    """``transaction.atomic()`` for a test's many writes, undone with ``set_rollback``.

    Like a test case's own block it stands for no transaction of the service:
    ``infra.locks`` judges the lock order of each service's transaction
    inside it on its own, as production runs them.
    """
    block = transaction.atomic()
    block._from_testcase = True
    return block


def block_of_the_test() -> transaction.Atomic:
    """``transaction.atomic()`` that a test wraps around a request to catch what it breaks.

    In production a request runs in autocommit, each store of rounds its own
    transaction; this block stands for none of them (``infra.locks`` judges
    each inside on its own), like ``rolled_back_block``.
    """
    block = transaction.atomic()
    block._from_testcase = True
    return block
