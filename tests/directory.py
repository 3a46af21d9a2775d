"""A real directory server for the sign-in tests: OpenLDAP's slapd (Debian's package, which
scripts/test installs), started on a free port with a throwaway database.

The casino's tree: ``ou=people`` and ``ou=groups`` under ``dc=casino,dc=test``. The server
keeps who made and who last changed each entry (``creatorsName``, ``modifiersName``) as
every OpenLDAP does; entries are added by whoever the test binds as, so those are real.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

SUFFIX = "dc=casino,dc=test"
ROOT_DN = f"cn=admin,{SUFFIX}"
ROOT_PASSWORD = "directory-root-test-secret"
PEOPLE = f"ou=people,{SUFFIX}"
GROUPS = f"ou=groups,{SUFFIX}"
SLAPD = shutil.which("slapd") or "/usr/sbin/slapd"
ROLE_GROUP = {"auditor": f"cn=auditors,{GROUPS}", "supervisor": f"cn=supervisors,{GROUPS}",
              "admin": f"cn=admins,{GROUPS}"}


def dn_of(uid: str) -> str:
    return f"uid={uid},{PEOPLE}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Directory:
    """One slapd, its tree made and its role groups empty; ``person`` and ``join`` fill it."""

    def __init__(self):
        self.root = Path(tempfile.mkdtemp(prefix="slapd-"))
        self.port = _free_port()
        self.uri = f"ldap://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None

    def start(self) -> Directory:
        (self.root / "data").mkdir()
        (self.root / "slapd.conf").write_text(f"""
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
modulepath /usr/lib/ldap
moduleload back_mdb
pidfile {self.root}/slapd.pid
database mdb
maxsize 10485760
suffix "{SUFFIX}"
rootdn "{ROOT_DN}"
rootpw {ROOT_PASSWORD}
directory {self.root}/data
access to attrs=userPassword by self write by anonymous auth by users write
access to * by users write by anonymous read
""")
        self.process = subprocess.Popen(
            [SLAPD, "-f", str(self.root / "slapd.conf"), "-h", f"{self.uri}/", "-d", "0"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"slapd did not start: {self.process.stderr.read().decode()[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError("slapd did not listen within 20 s")
        with self.bound(ROOT_DN, ROOT_PASSWORD) as conn:
            conn.add_s(SUFFIX, _attrs(objectClass=["dcObject", "organization"], dc="casino", o="Casino"))
            for ou in ("people", "groups"):
                conn.add_s(f"ou={ou},{SUFFIX}", _attrs(objectClass="organizationalUnit", ou=ou))
            for role, dn in ROLE_GROUP.items():
                # groupOfNames must have a member: the root holds each group's place.
                conn.add_s(dn, _attrs(objectClass="groupOfNames", cn=dn.split(",")[0][3:], member=ROOT_DN))
        return self

    def bound(self, dn: str, password: str):
        import ldap

        conn = ldap.initialize(self.uri)
        conn.simple_bind_s(dn, password)
        return _Closing(conn)

    def person(self, uid: str, password: str, *, by: tuple[str, str] = (ROOT_DN, ROOT_PASSWORD)) -> str:
        """Add the person ``uid`` with ``password``, made by whoever ``by`` (dn, password) names."""
        with self.bound(*by) as conn:
            conn.add_s(dn_of(uid), _attrs(objectClass="inetOrgPerson", uid=uid, cn=uid, sn=uid.title(),
                                          givenName=uid.title(), mail=f"{uid}@casino.test", userPassword=password))
        return dn_of(uid)

    def join(self, uid: str, role: str, *, by: tuple[str, str] = (ROOT_DN, ROOT_PASSWORD)) -> None:
        import ldap

        with self.bound(*by) as conn:
            conn.modify_s(ROLE_GROUP[role], [(ldap.MOD_ADD, "member", [dn_of(uid).encode()])])

    def leave(self, uid: str, role: str) -> None:
        import ldap

        with self.bound(ROOT_DN, ROOT_PASSWORD) as conn:
            conn.modify_s(ROLE_GROUP[role], [(ldap.MOD_DELETE, "member", [dn_of(uid).encode()])])

    def settings(self) -> dict:
        """The service's settings for this directory, as casino/settings.py makes them from the
        DIRECTORY_* environment."""
        from django.conf import settings

        from casino.directory_settings import BACKEND, directory_settings

        return {
            **directory_settings(uri=self.uri, people=PEOPLE, groups=GROUPS, bind_dn=ROOT_DN,
                                 bind_password=ROOT_PASSWORD,
                                 role_groups_text=";".join(f"{role}={dn}" for role, dn in ROLE_GROUP.items())),
            "AUTHENTICATION_BACKENDS": [settings.AUTHENTICATION_BACKENDS[0], BACKEND,
                                        *settings.AUTHENTICATION_BACKENDS[1:]],
        }

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        shutil.rmtree(self.root, ignore_errors=True)


class _Closing:
    def __init__(self, conn):
        self.conn = conn

    def __enter__(self):
        return self.conn

    def __exit__(self, *exc):
        self.conn.unbind_s()


def _attrs(**values) -> list[tuple[str, list[bytes]]]:
    return [(name, [v.encode() for v in (value if isinstance(value, list) else [value])])
            for name, value in values.items()]
