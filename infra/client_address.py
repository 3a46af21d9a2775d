"""The address a request came from, behind the reverse proxies the casino says it runs.

Behind a proxy every request comes from the proxy's address, so a lockout
keyed on it would let anyone lock a real auditor out from anywhere. The
proxy writes the client's address into ``X-Forwarded-For``; anyone can write
that header too, so it is believed only when the request came from a
configured proxy (``TRUSTED_PROXIES``), and then only as far as the chain of
trusted proxies goes: the first address, from the right, that is not one of
them.
"""

from __future__ import annotations

from ipaddress import ip_address, ip_network

from django.conf import settings


def client_address(request) -> str | None:
    remote = request.META.get("REMOTE_ADDR")
    if not _trusted(remote):
        return remote
    hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if hop.strip()]
    for hop in reversed(hops):
        if not _trusted(hop):
            return hop if _an_address(hop) else remote
    return remote


def _trusted(address: str | None) -> bool:
    return within(address, settings.TRUSTED_PROXIES)


def within(address: str | None, networks) -> bool:
    """Whether ``address`` is one of ``networks`` (addresses or networks, as settings write them)."""
    if not address or not _an_address(address):
        return False
    return any(ip_address(address) in ip_network(network, strict=False) for network in networks)


def _an_address(text: str) -> bool:
    try:
        ip_address(text)
    except ValueError:
        return False
    return True
