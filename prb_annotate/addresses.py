"""The client's address, as the login throttle and the invite links count it.

Behind a reverse proxy every request comes from the proxy's address, so the deployment names
the header the proxy fills in (``LOGIN_CLIENT_ADDRESS_HEADER``, e.g. ``HTTP_X_REAL_IP``); of a
list such as X-Forwarded-For, the last entry is the one the proxy itself saw, the only one a
client cannot forge.

Counts are kept per *network* for IPv6: one subscriber gets a whole /64 and may pick any of its
2^64 addresses for each request, so an IPv6 address counts as its /64 (``2001:db8:1:2::/64``).
An IPv4 address counts as itself.
"""

import ipaddress

from django.conf import settings
from django.http import HttpRequest

ADDRESS_FIELD_MAX = 100
IPV6_NETWORK_BITS = 64


def client_address(request: HttpRequest) -> str:
    """The key the request's address is counted under (see the module)."""
    header = settings.LOGIN_CLIENT_ADDRESS_HEADER
    value = request.META.get(header, "") if header else ""
    if value:
        return address_key(value.split(",")[-1].strip())
    return address_key(str(request.META.get("REMOTE_ADDR", "")))


def address_key(address: str) -> str:
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address[:ADDRESS_FIELD_MAX]  # not an address (a test client, a unix socket)
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network(f"{parsed}/{IPV6_NETWORK_BITS}", strict=False))
    return str(parsed)
