from __future__ import annotations

import hashlib
import hmac
import json
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

TOLERANCE = 300  # seconds, as the bridge's receivers use
MAX_BODY = 1 << 20


class WebhookError(Exception):
    """A refused resume webhook. ``code``: missing_signature, stale_signature,
    bad_signature or bad_body."""

    def __init__(self, code: str, message: str):
        self.code = code
        super().__init__(message)


def _header(headers: Mapping[str, str] | Any, name: str) -> str:
    get = getattr(headers, "get", None)
    if get is not None:
        v = get(name) or get(name.lower())
        if v is not None:
            return v.decode() if isinstance(v, bytes) else str(v)
    for k, v in dict(headers).items():
        k = k.decode() if isinstance(k, bytes) else k
        if k.lower() == name.lower():
            return v.decode() if isinstance(v, bytes) else str(v)
    return ""


def _mac(secret: bytes, prefix: str, body: bytes) -> str:
    return hmac.new(secret, prefix.encode() + body, hashlib.sha256).hexdigest()


def _key(secret: str | bytes | None) -> bytes:
    """The signing key; anyone can sign with an empty secret, so none is refused."""
    if not secret:
        raise ValueError("askbridge: the webhook secret is empty or missing: pass the bridge's BRIDGE_WEBHOOK_SECRET "
                         "(webhooks.secret) or the agent's webhook_secret as `secret`; anyone can sign with an empty secret")
    return secret.encode() if isinstance(secret, str) else bytes(secret)


def _verify(secret: str | bytes, headers: Any, body: str | bytes, tolerance: float, now: float | None) -> tuple[dict[str, Any], str]:
    key = _key(secret)
    raw = body.encode() if isinstance(body, str) else body
    sig = _header(headers, "X-Askbridge-Signature")
    delivery = _header(headers, "X-Askbridge-Delivery")
    ts, v1, v2 = "", [], []
    for part in sig.split(","):
        k, eq, v = part.partition("=")
        if not eq:
            continue
        k = k.strip()
        if k == "t":
            ts = v
        elif k == "v1":
            v1.append(v)
        elif k == "v2":
            v2.append(v)
    sigs, want = (v2, _mac(key, f"{ts}.{delivery}.", raw)) if v2 else (v1, _mac(key, f"{ts}.", raw))
    if not re.fullmatch(r"[+-]?\d+", ts) or not sigs:
        raise WebhookError("missing_signature", "missing or malformed X-Askbridge-Signature header")
    tol = tolerance if tolerance > 0 else TOLERANCE
    d = (time.time() if now is None else now) - int(ts)
    if d > tol or d < -tol:
        raise WebhookError("stale_signature", "signature timestamp outside the tolerance")
    ok = False
    for s in sigs:
        ok = hmac.compare_digest(want.encode(), s.encode()) or ok
    if not ok:
        raise WebhookError("bad_signature", "signature does not match the body")
    if not delivery:
        raise WebhookError("bad_body", "missing X-Askbridge-Delivery header")
    try:
        ev = json.loads(raw)
    except ValueError:
        raise WebhookError("bad_body", "the body is not JSON") from None
    if not isinstance(ev, dict) or not isinstance(ev.get("event"), str) or not (ev.get("question") or {}).get("id"):
        raise WebhookError("bad_body", "not a resume webhook body")
    ev["delivery_id"] = delivery
    return ev, f"{ts}.{_mac(key, f'{ts}.', raw)}"


def verify_webhook(secret: str | bytes, headers: Mapping[str, str] | Any, body: str | bytes, *,
                   tolerance: float = TOLERANCE, now: float | None = None) -> dict[str, Any]:
    """Verifies X-Askbridge-Signature over the raw body before parsing it: v2
    (covers X-Askbridge-Delivery) when present, else v1; a timestamp more than
    ``tolerance`` seconds from now is refused; constant-time compare. Returns
    the event with ``delivery_id``; raises WebhookError, or ValueError when
    the secret is empty or missing."""
    return _verify(secret, headers, body, tolerance, now)[0]


class MemoryDeduper:
    """Remembers delivery ids in this process (use a shared store across replicas)."""

    def __init__(self, ttl: float = 48 * 3600):
        self.ttl = ttl
        self._seen: dict[str, tuple[bool, float]] = {}

    def begin(self, id: str) -> str:
        now = time.monotonic()
        self._seen = {k: v for k, v in self._seen.items() if now - v[1] <= self.ttl}
        if id in self._seen:
            return "done" if self._seen[id][0] else "busy"
        self._seen[id] = (False, now)
        return "new"

    def finish(self, id: str, ok: bool) -> None:
        if ok:
            self._seen[id] = (True, time.monotonic())
        else:
            self._seen.pop(id, None)


Handler = Callable[[dict[str, Any]], Awaitable[None] | None]


def asgi_receiver(secret: str | bytes, on_event: Handler, *, dedupe: MemoryDeduper | None = None,
                  tolerance: float = TOLERANCE) -> Callable[..., Awaitable[None]]:
    """A small ASGI app for resume webhooks (mount it in FastAPI/Starlette with
    ``app.mount("/resume", asgi_receiver(...))``): 200 handled or duplicate;
    401 bad, stale or replayed signature; 400 not a resume webhook; 503 with
    Retry-After while the same delivery is handled or when on_event raises.
    A delivery (and its signature) counts as seen only once on_event
    succeeded, so a retry after a failure is handled, even within the same
    second. Raises ValueError when the secret is empty or missing."""
    _key(secret)
    seen = dedupe or MemoryDeduper()

    async def app(scope: dict[str, Any], receive: Callable[..., Awaitable[dict[str, Any]]], send: Callable[..., Awaitable[None]]) -> None:
        if scope["type"] != "http":
            return

        async def reply(status: int, text: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
            await send({"type": "http.response.start", "status": status,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8"), *(extra or [])]})
            await send({"type": "http.response.body", "body": text.encode()})

        if scope["method"] != "POST":
            await reply(405, "POST only\n", [(b"allow", b"POST")])
            return
        body = b""
        while True:
            msg = await receive()
            body += msg.get("body", b"")
            if len(body) > MAX_BODY:
                await reply(413, "body too large\n")
                return
            if not msg.get("more_body"):
                break
        headers = {k.decode().lower(): v.decode() for k, v in scope.get("headers", [])}
        try:
            ev, signing = _verify(secret, headers, body, tolerance, None)
        except WebhookError as err:
            await reply(400 if err.code == "bad_body" else 401, f"{err}\n")
            return
        state = seen.begin(ev["delivery_id"])
        if state == "done":
            await reply(200, "duplicate\n")
            return
        if state == "busy":
            await reply(503, "try again later\n", [(b"retry-after", b"5")])
            return
        # A signature handled (or being handled) under another delivery id is
        # a captured delivery sent again. It counts as used only once its
        # delivery was handled: a retry after a failure is handled, even one
        # with the same signature (the same second).
        sig = "signature:" + signing
        if seen.begin(sig) != "new":
            seen.finish(ev["delivery_id"], False)
            await reply(401, "this signature was already used; a delivery is never sent twice with one signature\n")
            return
        try:
            r = on_event(ev)
            if r is not None:
                await r
        except Exception:
            seen.finish(sig, False)
            seen.finish(ev["delivery_id"], False)
            await reply(503, "try again later\n", [(b"retry-after", b"5")])
            return
        seen.finish(sig, True)
        seen.finish(ev["delivery_id"], True)
        await reply(200, "ok\n")

    return app
