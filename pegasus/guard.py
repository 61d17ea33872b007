"""Who may talk to a local service holding private memories: the one door both the
memory service and MCP over HTTP sit behind, checked before any route runs.

- **Host.** Only the names the service is reached by on this machine (127.0.0.1,
  localhost, ::1), the address it listens on and ``PEGASUS_ALLOWED_HOSTS``. A web page
  that rebinds its own name to 127.0.0.1 sends that name as its Host, and is refused.
  A service listening on every address (0.0.0.0, ::) takes any IP address too: an
  address cannot be rebound.
- **Token.** Required beyond this machine and at least :data:`MIN_TOKEN_CHARS` long;
  when set, every path needs it (the OpenAPI pages too), compared in constant time,
  the scheme in any case (``Bearer``, ``bearer``).
- **Origin.** A browser names the page a request comes from: a page of another site
  is refused even when it sends the request to 127.0.0.1.
- **Size.** A body over its path's limit is refused by its declared length before it
  is read, or as soon as it grows past the limit.

Refusals are one line of JSON, ``{"error": ...}``, with the error tree's status."""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from pegasus.errors import (
    AuthError,
    ConfigError,
    ForeignHostError,
    PegasusError,
    TooLargeError,
    ValidationError,
)

LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
EVERY_ADDRESS = frozenset({"0.0.0.0", "::", ""})
MIN_TOKEN_CHARS = 16

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def check_exposure(host: str, token: str | None, what: str = "the service") -> None:
    """Refuses to listen beyond this machine without a token, or with a short one."""
    if token and len(token) < MIN_TOKEN_CHARS:
        raise ConfigError(f"PEGASUS_TOKEN has {len(token)} characters: at least "
                          f"{MIN_TOKEN_CHARS} (e.g. python -c 'import secrets; "
                          "print(secrets.token_urlsafe())')")  # fmt: skip
    if host not in LOCAL_HOSTS and not token:
        raise ValidationError(f"--host {host} opens {what} beyond this machine: set PEGASUS_TOKEN")


def host_name(header: str) -> str:
    """The name in a Host header, without its port, an address in its usual form:
    ``[::1]:8765`` -> ``::1``. Anything else after a bracketed address is no name."""
    header = header.strip().lower()
    if header.startswith("["):
        inside, _, rest = header[1:].partition("]")
        name = inside if rest == "" or (rest[:1] == ":" and rest[1:].isdigit()) else ""
    elif header.count(":") == 1:
        name, _, port = header.partition(":")
        name = name if port.isdigit() else ""
    else:  # no port, or a bare IPv6 address (as the host to listen on is given)
        name = header
    try:
        return str(ipaddress.ip_address(name))  # 0:0:0:0:0:0:0:1 is ::1
    except ValueError:
        return name


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def bearer(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer ...`` header, the scheme in any case."""
    scheme, _, value = (header or "").strip().partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


class Guard:
    """ASGI middleware: Host, token and body size, for every HTTP request. ``limits``
    gives some paths a smaller body limit than ``max_body``."""

    def __init__(
        self,
        app: ASGIApp,
        host: str,
        token: str | None,
        max_body: int,
        allowed_hosts: str = "",
        limits: Mapping[str, int] | None = None,
    ) -> None:
        self.app, self.token, self.max_body = app, token or None, max_body
        self.limits = {path: min(limit, max_body) for path, limit in (limits or {}).items()}
        extra = {name.strip().lower() for name in allowed_hosts.split(",") if name.strip()}
        self.hosts = LOCAL_HOSTS | {host_name(host)} | {host_name(name) for name in extra}
        self.any_address = host in EVERY_ADDRESS

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":  # the server's own start and stop
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no websocket is served
            await send({"type": "websocket.close", "code": 1008})
            return
        headers = {key.decode("latin-1"): value.decode("latin-1")
                   for key, value in scope["headers"]}  # fmt: skip
        try:
            self.check(headers, scope["path"])
        except PegasusError as refused:
            await _refuse(send, refused)
            return
        if "content-length" not in headers:  # chunked, or none: read here, up to the limit
            try:
                receive = await _read_whole(receive, self.limits.get(scope["path"], self.max_body))
            except TooLargeError as refused:
                await _refuse(send, refused)
                return
        await self.app(scope, receive, send)

    def check(self, headers: Mapping[str, str], path: str) -> None:
        name = host_name(headers.get("host", ""))
        if name not in self.hosts and not (self.any_address and _is_address(name)):
            raise ForeignHostError(f"this service is not reached as {name or 'no host'!r}: "
                                   "only from this machine (PEGASUS_ALLOWED_HOSTS adds "
                                   "names)")  # fmt: skip
        origin = headers.get("origin")
        if origin is not None and host_name(urlsplit(origin).hostname or "") not in self.hosts:
            # A page of another site (or a sandboxed one: "null"), whatever name it
            # sent the request to.
            raise ForeignHostError(f"requests from pages of {origin!r} are refused")
        if self.token is not None:
            given = bearer(headers.get("authorization"))
            if given is None or not hmac.compare_digest(given.encode(), self.token.encode()):
                raise AuthError("a bearer token is required (PEGASUS_TOKEN)")
        declared = headers.get("content-length", "")
        limit = self.limits.get(path, self.max_body)
        if declared.isdigit() and int(declared) > limit:
            raise TooLargeError(too_large(int(declared), limit))


def too_large(size: int, limit: int) -> str:
    return (f"the request holds {size:,} bytes, over the limit of {limit:,} "
            "(PEGASUS_MAX_BODY_MB, PEGASUS_MAX_MESSAGE_CHARS)")  # fmt: skip


async def _read_whole(receive: Receive, limit: int) -> Receive:
    """The body of a request that declared no length, read whole unless it passes
    ``limit``, and handed on as one message."""
    chunks, seen, message = [], 0, {"more_body": True}
    while message.get("more_body", False):
        message = await receive()
        if message["type"] != "http.request":  # the client left: pass that on
            return _replay(message, receive)
        chunks.append(message.get("body", b""))
        seen += len(chunks[-1])
        if seen > limit:
            raise TooLargeError(too_large(seen, limit))
    whole = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
    return _replay(whole, receive)


def _replay(first: dict[str, Any], receive: Receive) -> Receive:
    """``first``, then ``receive`` itself (which tells when the client leaves)."""
    pending = [first]

    async def replay() -> dict[str, Any]:
        return pending.pop() if pending else await receive()

    return replay


async def _refuse(send: Send, error: PegasusError) -> None:
    body = json.dumps({"error": str(error)}).encode()
    headers = [(b"content-type", b"application/json"),
               (b"content-length", str(len(body)).encode())]  # fmt: skip
    if error.http_status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": error.http_status,
                "headers": headers})  # fmt: skip
    await send({"type": "http.response.body", "body": body})
