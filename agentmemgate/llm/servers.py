"""Which server a base URL names, for the cross-family rule.

``http://localhost:8000/v1``, ``http://127.0.0.1:8000``, ``http://[::1]:8000/v1/`` are one server,
so a judge there is the generator's own family, not a second one. Loopback names collapse to
``localhost``, the scheme's default port is the same as no port, and the path (a trailing slash
included) does not count: one host and port is one server.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}
COMPATIBLE = "openai-compatible:"


def server_of(url: str) -> str:
    """``host:port`` of a base URL, loopback addresses all named ``localhost``."""
    parts = urlsplit(url if "://" in url else f"http://{url}")
    host = (parts.hostname or url).lower().rstrip(".")
    try:
        port = parts.port
    except ValueError:
        port = None
    if host == "localhost" or host.endswith(".localhost") or _loopback(host):
        host = "localhost"
    defaults = (
        {_DEFAULT_PORTS[parts.scheme.lower()]}
        if parts.scheme.lower() in _DEFAULT_PORTS and "://" in url
        else set(_DEFAULT_PORTS.values())
    )
    return f"{host}:{port}" if port and port not in defaults else host


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def family_of(provider: str, base_url: str | None = None) -> str:
    """A model's family for the cross-family rule: the server for a model at a base URL (one
    server, one family, however its URL is spelled), else the provider."""
    return f"{COMPATIBLE}{server_of(base_url)}" if base_url else provider


def normalize_family(family: str) -> str:
    """A family as the cross-family rule compares it (older workspaces logged raw hosts)."""
    if family.startswith(COMPATIBLE):
        return COMPATIBLE + server_of(family[len(COMPATIBLE) :])
    return family
