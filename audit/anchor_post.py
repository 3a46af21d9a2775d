"""The one call the service makes out of its own host: an anchor POSTed to ``AUDIT_ANCHOR_URL``.

Kept alone in its module so that the inventory test
(tests/security/test_inventory.py) can allow exactly this one and still
refuse an outbound client anywhere else. The standard library's client: the
service installs none of its own.
"""

from __future__ import annotations

import urllib.request

TIMEOUT_SECONDS = 10


class AnchorNotAccepted(OSError):
    """The receiver answered, but not with a 2xx: the anchor is not known to be kept."""


def anchor_post(url: str, body: bytes) -> None:
    if not url.startswith(("https://", "http://")):
        # urllib would also open file: and ftp: URLs.
        raise ValueError("AUDIT_ANCHOR_URL must be an http(s) URL")
    request = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as answer:  # noqa: S310 (scheme checked)
        if not 200 <= answer.status < 300:
            raise AnchorNotAccepted(f"{url} answered {answer.status}")
