"""The django-auth-ldap settings for a casino's directory, from the DIRECTORY_* environment.

Read by casino/settings.py at start-up (so this module imports no model) and by
the tests for the directory they start.
"""

from __future__ import annotations

import ldap
from django_auth_ldap.config import GroupOfNamesType, LDAPSearch

BACKEND = "casino.directory.DirectoryBackend"


def role_groups(text: str) -> dict[str, str]:
    """``role=group DN`` pairs separated by ``;`` (a DN holds commas); CasinoConfig.ready checks the roles."""
    return {role.strip(): dn.strip() for role, _, dn in (
        pair.partition("=") for pair in text.split(";") if pair.strip())}


def directory_settings(*, uri: str, people: str, groups: str, role_groups_text: str, bind_dn: str = "",
                       bind_password: str = "", person_filter: str = "(uid=%(user)s)",
                       start_tls: bool = False) -> dict:
    """The settings that sign people in against the directory at ``uri``: people looked up under
    ``people`` by ``person_filter``, their groups (groupOfNames) under ``groups``."""
    return {
        "DIRECTORY_URI": uri,
        "DIRECTORY_ROLE_GROUPS": role_groups(role_groups_text),
        "AUTH_LDAP_SERVER_URI": uri,
        "AUTH_LDAP_START_TLS": start_tls,
        "AUTH_LDAP_BIND_DN": bind_dn,
        "AUTH_LDAP_BIND_PASSWORD": bind_password,
        # "+": the entry's operational attributes too (who made and changed it, casino.directory);
        # the search's attributes are the person's, so it asks for them.
        "AUTH_LDAP_USER_SEARCH": LDAPSearch(people, ldap.SCOPE_SUBTREE, person_filter, ["*", "+"]),
        "AUTH_LDAP_GROUP_SEARCH": LDAPSearch(groups, ldap.SCOPE_SUBTREE, "(objectClass=groupOfNames)"),
        "AUTH_LDAP_GROUP_TYPE": GroupOfNamesType(),
        "AUTH_LDAP_USER_ATTR_MAP": {"first_name": "givenName", "last_name": "sn", "email": "mail"},
        "AUTH_LDAP_USER_ATTRLIST": ["*", "+"],
        # The person's roles are read again at every sign-in: the directory moves them.
        "AUTH_LDAP_ALWAYS_UPDATE_USER": True,
        "AUTH_LDAP_CONNECTION_OPTIONS": {ldap.OPT_NETWORK_TIMEOUT: 5, ldap.OPT_TIMEOUT: 10},
    }
