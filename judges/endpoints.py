"""What a judge may call and with which key: the one place these rules live.

**Keys.** A judge names the environment variable that holds its API key, never the key. The
name must be ``ASSAY_JUDGE_KEY_<NAME>`` (capital letters, digits and ``_``), so nothing else
of the server's environment (``SECRET_KEY``, ``DATABASE_URL``, mail passwords…) can be
named. A judge configured on the web may use the variable only if the operator lists its
project in ``ASSAY_JUDGE_KEY_<NAME>_PROJECTS`` (project slugs, comma-separated, or ``*``
for every project); a judge added by the operator with ``manage.py add_judge`` may use any
``ASSAY_JUDGE_KEY_*`` variable. ``resolve_key`` applies the rule when the worker calls,
``key_problem`` when a judge is saved. A refused name is never repeated back: it may be a
key pasted in the wrong field.

**Hosts.** A judge configured on the web may call only the hosts ``ASSAY_JUDGE_ALLOWED_HOSTS``
allows: ``*`` (the default) for any public host; host names (``llm.example.org``, or
``.example.org`` for its subdomains too), which may resolve to private addresses; IP
addresses and networks (``10.1.2.0/24``). Every address a name resolves to is checked;
loopback, private, link-local, unspecified, multicast and reserved addresses (IPv6's
``::1``, ``fc00::/7``, ``fe80::/10`` and IPv4 addresses inside IPv6 ones included) are
public for no one, the cloud metadata address is refused even when listed, and so are
Assay's own host names (``ALLOWED_HOSTS``) and their addresses. URLs with a user or a
password are refused. The check runs when a judge is saved and again on every connection
the worker opens (``guarded_client``): it connects to the very address it checked (so a
name that resolves elsewhere a second later cannot switch it) and follows no redirect.
A judge added with ``add_judge`` (the operator's) may name any host, a model server on
loopback included.

No Django import: the caller passes the settings.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import re
import socket
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from formats.errors import Problem, define, gettext_noop

log = logging.getLogger(__name__)

KEY_PREFIX = "ASSAY_JUDGE_KEY_"
PROJECTS_SUFFIX = "_PROJECTS"
VARIABLE = re.compile(r"[A-Z_][A-Z0-9_]{0,99}")
# Segments of a value that read as a secret rather than a name: long hex, or long
# base64-like runs with digits in them; or a provider's key prefix.
HEX_RUN = re.compile(r"[0-9A-Fa-f]{20,}")
BASE64_RUN = re.compile(r"[A-Za-z0-9+/=]{24,}")
KEY_PREFIXES = ("sk-", "sk_", "pk-", "rk-", "bearer ", "xai-", "gsk_", "hf_")

KEY_LOOKS_LIKE_A_KEY = define(
    "judge.key_looks_like_a_key",
    gettext_noop(
        "this looks like an API key: give the name of the environment variable that holds it "
        "(ASSAY_JUDGE_KEY_<NAME>), never the key itself"
    ),
)
KEY_NAME_RULE = define(
    "judge.key_name_rule",
    gettext_noop(
        "the API key is read from an environment variable named ASSAY_JUDGE_KEY_<NAME> "
        "(capital letters, digits and _): give that name, never the key"
    ),
)
KEY_NOT_FOR_PROJECT = define(
    "judge.key_not_for_project",
    gettext_noop(
        "the key in %(name)s is not allowed for project %(project)s: the server's operator "
        "lists the projects that may use it in %(name)s_PROJECTS"
    ),
)
KEY_NOT_SET = define(
    "judge_call.no_key", gettext_noop("the environment variable %(name)s is not set")
)
HOST_REFUSED = define(
    "judge.host_refused",
    gettext_noop(
        "Assay does not call this endpoint: judges configured here may call public hosts, "
        "or those the server's operator allows in ASSAY_JUDGE_ALLOWED_HOSTS"
    ),
)
URL_CREDENTIALS = define(
    "judge.url_credentials",
    gettext_noop("the base URL must not hold a user name or password"),
)
URL_SCHEME = define(
    "judge.url_scheme", gettext_noop("the base URL must be an http:// or https:// address")
)

# Cloud metadata services: refused even inside an allowed network.
METADATA = frozenset(
    ipaddress.ip_address(a) for a in ("169.254.169.254", "fd00:ec2::254", "100.100.100.200")
)
NAT64 = ipaddress.ip_network("64:ff9b::/96")

Resolver = Callable[..., list]


class KeyRefused(RuntimeError):
    """The judge may not use this key (or it is not set); ``problem`` says why."""

    def __init__(self, problem: Problem):
        super().__init__(str(problem))
        self.problem = problem


def looks_like_key(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered.startswith(KEY_PREFIXES):
        return True
    for segment in re.split(r"[_\-.\s]+", value):
        if HEX_RUN.fullmatch(segment):
            return True
        if BASE64_RUN.fullmatch(segment) and re.search(r"\d", segment):
            return True
    return len(value) > 100


def key_name_problem(name: str) -> Problem | None:
    """Why ``name`` cannot name a judge's key, or None. Never repeats the value."""
    name = name or ""
    if looks_like_key(name):
        return KEY_LOOKS_LIKE_A_KEY()
    if (
        not VARIABLE.fullmatch(name)
        or not name.startswith(KEY_PREFIX)
        or len(name) == len(KEY_PREFIX)
        or name.endswith(PROJECTS_SUFFIX)
    ):
        return KEY_NAME_RULE()
    return None


def key_projects(name: str, environ: Mapping[str, str] | None = None) -> set[str]:
    """The project slugs the operator allows the key in ``name`` for (``*``: every one)."""
    environ = os.environ if environ is None else environ
    value = environ.get(name + PROJECTS_SUFFIX, "")
    return {slug.strip() for slug in value.split(",") if slug.strip()}


def key_problem(
    name: str, *, project: str, by_operator: bool, environ: Mapping[str, str] | None = None
) -> Problem | None:
    """Why a judge of ``project`` may not use the key variable ``name``, or None."""
    problem = key_name_problem(name)
    if problem is not None or by_operator:
        return problem
    allowed = key_projects(name, environ)
    if "*" not in allowed and project not in allowed:
        return KEY_NOT_FOR_PROJECT(name=name, project=project)
    return None


def resolve_key(
    name: str, *, project: str, by_operator: bool, environ: Mapping[str, str] | None = None
) -> str:
    """The key a judge of ``project`` calls with, read when it calls; ``KeyRefused`` when the
    name breaks the rule, the key is not allowed for the project or it is not set."""
    environ = os.environ if environ is None else environ
    problem = key_problem(name, project=project, by_operator=by_operator, environ=environ)
    if problem is not None:
        raise KeyRefused(problem)
    key = environ.get(name, "")
    if not key:
        raise KeyRefused(KEY_NOT_SET(name=name))
    return key


def _embedded_v4(ip: ipaddress.IPv4Address | ipaddress.IPv6Address):
    """The IPv4 address an IPv6 one carries (mapped, 6to4, Teredo, NAT64, compatible)."""
    if ip.version != 6:
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in NAT64 or int(ip) >> 32 == 0:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def is_public(ip) -> bool:
    """A globally routable unicast address, whatever IPv4 address it may carry inside."""
    inner = _embedded_v4(ip)
    if inner is not None and not is_public(inner):
        return False
    return ip.is_global and not ip.is_multicast and not ip.is_reserved and ip not in METADATA


@dataclass(frozen=True)
class HostPolicy:
    """Which hosts a web-configured judge may call (see the module's docstring)."""

    any_public: bool
    names: tuple[str, ...]
    networks: tuple
    own_names: tuple[str, ...]

    @classmethod
    def parse(cls, allowed: Iterable[str], own_names: Iterable[str] = ()) -> HostPolicy:
        any_public, names, networks = False, [], []
        for entry in allowed:
            entry = entry.strip().lower()
            if not entry:
                continue
            if entry == "*":
                any_public = True
                continue
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
            except ValueError:
                names.append(entry.rstrip("."))
        own = tuple(
            n.strip().lower().rstrip(".") for n in own_names if n.strip() and n.strip() != "*"
        )
        return cls(any_public, tuple(names), tuple(networks), own)

    def _listed(self, host: str) -> bool:
        return any(
            host == name or (name.startswith(".") and (host.endswith(name) or host == name[1:]))
            for name in self.names
        )

    def _own(self, host: str) -> bool:
        return any(
            host == name or (name.startswith(".") and (host.endswith(name) or host == name[1:]))
            for name in self.own_names
        )

    def _own_addresses(self, resolve: Resolver | None) -> set:
        found = set()
        for name in self.own_names:
            name = name.lstrip(".")
            try:
                found.update(_addresses(name, None, resolve))
            except OSError:
                continue
        return found

    def _address_ok(self, ip, listed_name: bool) -> bool:
        if ip in METADATA or (_embedded_v4(ip) or ip) in METADATA:
            return False
        if ip.is_unspecified or ip.is_multicast:
            return False
        if listed_name or self._in_networks(ip):
            return True
        return self.any_public and is_public(ip)

    def _in_networks(self, ip) -> bool:
        inner = _embedded_v4(ip)
        return any(
            (ip.version == net.version and ip in net)
            or (inner is not None and inner.version == net.version and inner in net)
            for net in self.networks
        )

    def addresses(self, host: str, port: int | None, resolve: Resolver | None = None):
        """The addresses of ``host`` a judge may connect to (resolved once, here); raises
        ``HostRefused`` when any of them, or the host itself, is not allowed."""
        host = host.strip("[]").lower().rstrip(".")
        if not host:
            raise HostRefused(host, "no host")
        try:
            literal = ipaddress.ip_address(host)
        except ValueError:
            literal = None
        listed = literal is None and self._listed(host)
        if literal is None and not listed and not self.any_public:
            raise HostRefused(host, "not listed")
        try:
            found = [literal] if literal is not None else _addresses(host, port, resolve)
        except (OSError, UnicodeError, ValueError):
            raise HostRefused(host, "not resolved") from None
        if not found:
            raise HostRefused(host, "not resolved")
        for ip in found:
            if not self._address_ok(ip, listed):
                raise HostRefused(host, f"resolves to {ip}")
        # Assay's own host, unless the operator lists it (by name or network) on purpose.
        unlisted = [ip for ip in found if not listed and not self._in_networks(ip)]
        if unlisted and (self._own(host) or set(unlisted) & self._own_addresses(resolve)):
            raise HostRefused(host, "Assay's own host")
        return found


class HostRefused(OSError):
    """A host a web-configured judge may not call; the reason is for the worker's log only."""

    def __init__(self, host: str, why: str):
        super().__init__(f"judge endpoint host {host!r} refused: {why}")


def _addresses(host: str, port: int | None, resolve: Resolver | None) -> list:
    infos = (resolve or socket.getaddrinfo)(host, port, 0, socket.SOCK_STREAM)
    found = []
    for info in infos:
        ip = ipaddress.ip_address(info[4][0].split("%", 1)[0])
        if ip not in found:
            found.append(ip)
    return found


def has_credentials(url: str) -> bool:
    """Whether ``url`` carries a user name or password (``https://user:pass@host/``)."""
    try:
        parts = urlsplit(url or "")
    except ValueError:
        return False
    return parts.username is not None or parts.password is not None or "@" in parts.netloc


def url_problem(url: str, policy: HostPolicy, resolve: Resolver | None = None) -> Problem | None:
    """Why a web-configured judge may not call ``url``, or None (checked when it is saved).
    One message for every refused host, so the answer tells nothing of the network."""
    try:
        parts = urlsplit(url or "")
        port = parts.port
    except ValueError:
        return URL_SCHEME()
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return URL_SCHEME()
    if has_credentials(url):
        return URL_CREDENTIALS()
    try:
        policy.addresses(parts.hostname, port or (443 if parts.scheme == "https" else 80), resolve)
    except HostRefused as refused:
        log.info("%s", refused)
        return HOST_REFUSED()
    return None


def guarded_client(policy: HostPolicy | None, timeout: float):
    """The HTTP client a judge calls with: no redirect followed; with a ``policy`` (a
    judge configured on the web), every connection checked by it (``judges.transport``,
    which imports httpx only when a judge calls)."""
    from .transport import guarded_client as client

    return client(policy, timeout)
