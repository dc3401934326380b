"""Whether the daemon is on this machine: the switch between today's plain client and the resilient one.

Kept apart from ``resilient.py`` so the hook client can ask without importing ``http.client``.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

MODES = ("auto", "always", "never")


def is_local_url(url: str) -> bool:
    """True for localhost and loopback addresses: today's plain client is right for those."""
    host = (urlsplit(url).hostname or "127.0.0.1").strip("[]")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def resilience_on(mode: str, url: str) -> bool:
    """``always``, ``never``, or (``auto``) whenever the daemon is not on this machine."""
    mode = str(mode).lower()
    return mode == "always" or (mode == "auto" and not is_local_url(url))
