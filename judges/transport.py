"""The HTTP client an LLM judge calls with (``guarded_client``): its connections opened only
to addresses the host policy of ``judges.endpoints`` allows. Its own module so that httpx
is imported only when a judge calls, not by every process that loads the judges app."""

from __future__ import annotations

import logging

import httpcore
import httpx

from .endpoints import HostPolicy, HostRefused, Resolver

log = logging.getLogger("judges.endpoints")


class GuardedBackend(httpcore.SyncBackend):
    """Connects only to an address the policy allows: the one it checked."""

    def __init__(self, policy: HostPolicy, resolve: Resolver | None = None):
        self.policy, self.resolve = policy, resolve

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        try:
            allowed = self.policy.addresses(host, port, self.resolve)
        except HostRefused as refused:
            log.warning("%s", refused)
            raise httpcore.ConnectError(str(refused)) from None
        return super().connect_tcp(str(allowed[0]), port, timeout, local_address, socket_options)


class GuardedTransport(httpx.HTTPTransport):
    """httpx's transport, its connections opened by ``GuardedBackend``, no proxy from the
    environment (a proxy would connect for it, unchecked)."""

    def __init__(self, policy: HostPolicy, resolve: Resolver | None = None):
        super().__init__(trust_env=False)
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False),
            max_connections=100,
            max_keepalive_connections=20,
            keepalive_expiry=5.0,
            network_backend=GuardedBackend(policy, resolve),
        )


def guarded_client(policy: HostPolicy | None, timeout: float) -> httpx.Client:
    """The HTTP client a judge calls with: no redirect followed; with a ``policy`` (a
    judge configured on the web), every connection checked by it."""
    transport = GuardedTransport(policy) if policy is not None else httpx.HTTPTransport()
    return httpx.Client(
        transport=transport,
        follow_redirects=False,
        timeout=timeout,
        trust_env=policy is None,
    )
