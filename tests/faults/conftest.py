"""A private PostgreSQL for the fault tests, and a freshly migrated database per test."""

from __future__ import annotations

import pytest

from bench.load import Throwaway

from .cluster import Cluster, postgres_bin

TEMPLATE = "ta_template"


@pytest.fixture(scope="session")
def private_cluster():
    """One cluster for the session, with a migrated template database to copy."""
    if postgres_bin() is None:
        pytest.skip("no PostgreSQL server binaries (initdb) on this machine")
    cluster = Cluster().init()
    cluster.start()
    try:
        Throwaway(cluster.url, TEMPLATE).create()
        yield cluster
    finally:
        cluster.destroy()


@pytest.fixture
def fresh_database(private_cluster):
    """A database of this test's own on the private cluster, copied from the migrated template."""
    database = Throwaway(private_cluster.url).create(template=TEMPLATE)
    try:
        yield database
    finally:
        if private_cluster.is_up():
            database.drop()
