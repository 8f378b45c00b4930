"""The client's address, as the login throttle and the invite links count it.

Behind a reverse proxy every request comes from the proxy's address, so the deployment names
the header the proxy fills in (``LOGIN_CLIENT_ADDRESS_HEADER``, e.g. ``HTTP_X_REAL_IP``); of a
list such as X-Forwarded-For, the last entry is the one the proxy itself saw, the only one a
client cannot forge.

Counts are kept per *network* for IPv6: one subscriber gets a whole /64 and may pick any of its
2^64 addresses for each request, so an IPv6 address counts as its /64 (``2001:db8:1:2::/64``).
An IPv4 address counts as itself.

The invite links count wider *networks* (``client_network``): a flood spread over the /64s of
one home connection (a /56 or a /48 is what a provider delegates to one customer) or over the
addresses of one IPv4 block is one network. An IPv6 address counts as its /48, the widest
prefix one customer site is given (RFC 6177 allows anything from /48 to /64; counting the
/48 catches every such site, at the price of a large organisation's participants sharing one
share); an IPv4 address as its /24, the smallest block routed on the internet. A study's
participants rarely share a /24 or a /48; one network's accounts may hold a tenth of a
campaign's slots per hour (``campaigns/join_limits.py``).
"""

import ipaddress

from django.conf import settings
from django.http import HttpRequest

ADDRESS_FIELD_MAX = 100
IPV6_NETWORK_BITS = 64
IPV6_JOIN_NETWORK_BITS = 48
IPV4_JOIN_NETWORK_BITS = 24


def client_address(request: HttpRequest) -> str:
    """The key the request's address is counted under (see the module)."""
    return address_key(raw_address(request))


def client_network(request: HttpRequest) -> str:
    """The network the request comes from, as the invite links count it (see the module)."""
    return network_key(raw_address(request))


def raw_address(request: HttpRequest) -> str:
    header = settings.LOGIN_CLIENT_ADDRESS_HEADER
    value = request.META.get(header, "") if header else ""
    if value:
        return str(value).split(",")[-1].strip()
    return str(request.META.get("REMOTE_ADDR", ""))


def network_key(address: str) -> str:
    """``2001:db8:1:2::9`` → ``2001:db8:1::/48``; ``198.51.100.7`` → ``198.51.100.0/24``."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address[:ADDRESS_FIELD_MAX]
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
        parsed = parsed.ipv4_mapped
    bits = IPV6_JOIN_NETWORK_BITS if parsed.version == 6 else IPV4_JOIN_NETWORK_BITS
    return str(ipaddress.ip_network(f"{parsed}/{bits}", strict=False))


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
