import asyncio
import json
import os
import threading

import httpx
import pytest

from askbridge import AskBridgeError, AsyncClient, Client, WaitTimeout, WebhookError, approval_body, approval_outcome, asgi_receiver, verify_webhook
from conftest import MARIA, pending


def answer_later(bridge, id, body, delay=0.3):
    t = threading.Timer(delay, lambda: bridge.respond(id, body))
    t.start()
    return t


def test_ask_and_wait_returns_the_answer_and_a_second_wait_the_same_record(bridge):
    body = {"run_id": "r1", "agent_id": "bot", "question": "Which auth method?", "header": "Auth",
            "options": [{"label": "OAuth 2.0", "value": "oauth"}, {"label": "API key"}], "timeout": "5m", "idempotency_key": "k1"}
    q = bridge.ask(body)
    assert q["status"] == "pending" and "pause until someone answers" in q["message"]
    assert bridge.ask(body)["id"] == q["id"], "the same idempotency key re-attaches"
    answer_later(bridge, q["id"], {"response": "OAuth 2.0", "responded_by": MARIA})
    done = bridge.ask_and_wait(body)
    assert done["status"] == "answered" and done["response"] == "oauth"
    assert done["answers"] == {"Which auth method?": "OAuth 2.0"}
    assert bridge.wait(q["id"]) == done
    assert bridge.get(q["id"]) == done


def test_items_open_ended_and_approvals_with_their_action(bridge):
    q = bridge.ask({"run_id": "r2", "questions": [
        {"question": "Which features?", "multiSelect": True, "options": [{"label": "Login"}, {"label": "Search"}]},
        {"question": "Anything else?"}], "responders": {"users": ["slack:U0MARIA"]}, "timeout": 600})
    bridge.respond(q["id"], {"answers": {"Which features?": ["Login", "Search"], "Anything else?": "ship it"}, "responded_by": MARIA})
    assert bridge.wait(q["id"])["selections"] == {"Which features?": ["Login", "Search"], "Anything else?": ["ship it"]}
    a = bridge.ask(approval_body("run-9", "call-1", "deploy", {"env": "prod"}, timeout="10m"))
    assert a["run_id"] == "run-9" and a["action"]["call_id"] == "call-1" and "idempotency_key" not in a
    assert a["action"]["input"] == {"env": "prod"} and a["action"]["allow_edit"] is False
    with pytest.raises(AskBridgeError) as e:
        bridge.respond(a["id"], {"edited_input": {"env": "staging"}})
    assert e.value.status == 400 and e.value.field == "edited_input"
    bridge.respond(a["id"], {"reason": "not on a Friday", "responded_by": MARIA})
    o = approval_outcome(bridge.wait(a["id"]))
    assert o["approved"] is False and o["reason"] == "not on a Friday"


def test_a_client_deadline_never_drops_a_late_answer(bridge):
    q = bridge.ask({"run_id": "r", "question": "Late?", "options": [{"label": "Yes"}, {"label": "No"}]})
    with pytest.raises(WaitTimeout) as e:
        bridge.wait(q["id"], timeout=1.2)
    assert e.value.code == "wait_timeout" and e.value.question["status"] == "pending"
    bridge.respond(q["id"], {"response": "No", "responded_by": MARIA})
    assert bridge.wait(q["id"], timeout=2)["response"] == "No"


def test_list_and_cancel_with_a_note(bridge):
    q1 = bridge.ask({"run_id": "ra", "question": "One?"})
    q2 = bridge.ask({"run_id": "rb", "question": "Two?"})
    assert [q["id"] for q in bridge.list(status="pending")] == [q1["id"], q2["id"]]
    assert [q["id"] for q in bridge.list(run_id="rb")] == [q2["id"]]
    c = bridge.cancel(q1["id"], reason="user", note="not on a Friday")
    assert c["status"] == "cancelled" and c["cancel_note"] == "not on a Friday"
    o = approval_outcome(c)
    assert o["approved"] is False and o["reason"] == "dismissed: not on a Friday"
    # A dismissal in Slack or Discord names the person.
    assert approval_outcome({**c, "responded_by": MARIA})["reason"] == "dismissed by maria: not on a Friday"
    with pytest.raises(AskBridgeError) as e:
        bridge.cancel(q1["id"])
    assert e.value.status == 409


def test_expiry_fails_closed_and_says_why(bridge):
    q = bridge.ask(approval_body("rx", "c1", "deploy", {"env": "prod"}, timeout="10s"))
    o = approval_outcome(bridge.wait(q["id"]))
    assert o == {"approved": False, "input": None, "edited": False, "always": False, "reason": "nobody answered within 10 s", "status": "expired"}


def test_invalid_questions_are_refused_before_anything_is_sent():
    sent = []
    c = Client(url="http://127.0.0.1:9", project="p", http=httpx.Client(transport=httpx.MockTransport(lambda r: sent.append(r))))
    with pytest.raises(AskBridgeError) as e:
        c.ask({"questions": [{"question": "Pick", "header": "Far too long a header", "options": [{"label": "A"}]}]})
    assert e.value.code == "invalid"
    assert e.value.details == [{"field": "questions[0].header", "problem": "at most 12 characters"},
                               {"field": "questions[0].options", "problem": "2 to 4 options, or none for an open-ended question; got 1"}]
    with pytest.raises(AskBridgeError) as e:
        c.ask({"question": "x", "parent_run_id": "p"})
    assert e.value.code == "subagent_not_allowed"
    # "Other" is added by every surface: the bridge's rule and words.
    for label in ("Other", "other…", "Something else"):
        with pytest.raises(AskBridgeError) as e:
            c.ask({"questions": [{"question": "Which database?", "header": "DB", "options": [{"label": "Postgres"}, {"label": label}]}]})
        assert e.value.details == [{"field": "questions[0].options[1].label",
                                    "problem": 'remove the "Other" option; the person can always answer in their own words ("Other" is added automatically)'}]
    assert sent == []


def test_api_refusals_are_typed(bridge):
    with pytest.raises(AskBridgeError) as e:
        bridge.ask({"question": "Soon?", "timeout": "1s"})
    assert (e.value.status, e.value.code, e.value.field) == (400, "invalid", "timeout")
    with pytest.raises(AskBridgeError) as e:
        bridge.get("00000000-0000-0000-0000-000000000000")
    assert (e.value.status, e.value.code) == (404, "not_found")


def test_a_bridge_that_is_down_names_the_url():
    with pytest.raises(AskBridgeError) as e:
        Client(url="http://127.0.0.1:9/", project="p").ask({"question": "Up?"})
    assert e.value.code == "unreachable" and "http://127.0.0.1:9" in str(e.value)


def test_async_client(bridge):
    async def main():
        async with AsyncClient(url=bridge.url, project=bridge.project) as c:
            q = await c.ask({"run_id": "ar", "question": "Async?", "options": [{"label": "Yes"}, {"label": "No"}]})
            waiting = asyncio.ensure_future(c.wait(q["id"]))
            await asyncio.sleep(0.2)
            await c.respond(q["id"], {"response": "Yes", "responded_by": MARIA})
            done = await waiting
            assert done["response"] == "Yes"
            assert await c.get(q["id"]) == done
            assert [x["id"] for x in await c.list(run_id="ar")] == [q["id"]]
    asyncio.run(main())


def test_webhook_verification_reaches_gos_verdict_on_every_vector():
    vectors = json.load(open(os.environ["ASKBRIDGE_VECTORS"]))
    assert len(vectors) >= 10
    for v in vectors:
        headers = {"X-Askbridge-Signature": v["header"], "X-Askbridge-Delivery": v["delivery"]}
        try:
            ev = verify_webhook(v["secret"], headers, v["body"], now=v["now"])
            got = (True, None)
            assert ev["delivery_id"] == v["delivery"], v["name"]
        except WebhookError as err:
            got = (False, err.code)
        assert got == (v["ok"], v.get("error")), v["name"]


def test_asgi_receiver_resumes_once_and_refuses_forged_stale_and_replayed(bridge):
    """The bridge's real webhook, captured, replayed into the ASGI receiver."""
    captured = {}
    events = []

    async def on_event(ev):
        events.append(ev)

    app = asgi_receiver(os.environ["BRIDGE_WEBHOOK_SECRET"], on_event)

    # A loopback receiver that records the raw delivery.
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class H(BaseHTTPRequestHandler):
        def do_POST(self):
            captured["body"] = self.rfile.read(int(self.headers["Content-Length"]))
            captured["headers"] = {k.lower(): v for k, v in self.headers.items()}
            self.send_response(200)
            self.end_headers()

        def log_message(self, *a):
            pass

    srv = HTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.handle_request, daemon=True).start()
    q = bridge.ask({"run_id": "wr", "question": "Go?", "options": [{"label": "Yes"}, {"label": "No"}],
                    "resume": {"url": f"http://127.0.0.1:{srv.server_address[1]}/resume"}})
    bridge.pause_run("wr")
    bridge.respond(q["id"], {"response": "Yes", "responded_by": MARIA})
    for _ in range(300):
        if "body" in captured:
            break
        import time
        time.sleep(0.05)
    srv.server_close()
    assert "body" in captured

    def post(headers, body):
        async def run():
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://recv") as c:
                return await c.post("/resume", content=body, headers=headers)
        return asyncio.run(run())

    h = {"x-askbridge-signature": captured["headers"]["x-askbridge-signature"], "x-askbridge-delivery": captured["headers"]["x-askbridge-delivery"]}
    r = post(h, captured["body"])
    assert r.status_code == 200 and events[0]["event"] == "question.answered" and events[0]["question"]["id"] == q["id"]
    assert events[0]["run"]["resumed_from"] == "wr"
    assert post(h, captured["body"]).text.strip() == "duplicate"
    assert post(h, captured["body"].replace(b"Yes", b"No")).status_code == 401
    assert post({**h, "x-askbridge-delivery": "other"}, captured["body"]).status_code == 401
    stale = dict(h, **{"x-askbridge-signature": "t=1,v1=" + "0" * 64})
    assert post(stale, captured["body"]).status_code == 401
    assert len(events) == 1


def _signed(key: bytes, delivery: str, body: bytes, ts: int, v2: bool = True) -> dict:
    """Headers of a resume webhook signed as the bridge signs it."""
    import hashlib
    import hmac
    mac = lambda prefix: hmac.new(key, prefix.encode() + body, hashlib.sha256).hexdigest()  # noqa: E731
    sig = f"t={ts},v1={mac(f'{ts}.')}" + (f",v2={mac(f'{ts}.{delivery}.')}" if v2 else "")
    return {"x-askbridge-signature": sig, "x-askbridge-delivery": delivery, "content-type": "application/json"}


_RESUME = json.dumps({"event": "question.answered", "question": {"id": "q1", "status": "answered"},
                      "run": {"id": "r2", "resumed_from": "r1", "agent_id": "a", "project_id": "p"}, "user_message": "hi"}).encode()


@pytest.mark.parametrize("secret", ["", b"", None], ids=["empty str", "empty bytes", "None"])
def test_webhook_verifiers_refuse_an_empty_or_missing_secret(secret):
    """Anyone can sign with an empty key: verify_webhook (when called) and asgi_receiver (when built) refuse it, naming what to set."""
    import time
    headers = _signed(b"", "d-1", _RESUME, int(time.time()))
    with pytest.raises(ValueError, match="BRIDGE_WEBHOOK_SECRET"):
        verify_webhook(secret, headers, _RESUME)
    with pytest.raises(ValueError, match="BRIDGE_WEBHOOK_SECRET"):
        asgi_receiver(secret, lambda ev: None)


@pytest.mark.parametrize("v2", [True, False], ids=["v1 and v2", "v1 only (older bridge)"])
def test_asgi_receiver_handles_a_same_second_retry_after_its_handler_failed(v2):
    import time
    calls = []

    def on_event(ev):
        calls.append(ev)
        if len(calls) == 1:
            raise RuntimeError("the runtime is restarting")

    app = asgi_receiver("s3cret", on_event)
    ts = int(time.time())
    headers = _signed(b"s3cret", "d-same", _RESUME, ts, v2)

    async def run():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://recv") as c:
            post = lambda h: c.post("/", content=_RESUME, headers=h)  # noqa: E731
            out = [(await post(headers)).status_code, (await post(headers)).status_code]
            dup = await post(headers)
            out.append((dup.status_code, dup.text.strip()))
            replay = dict(_signed(b"s3cret", "d-same", _RESUME, ts, False), **{"x-askbridge-delivery": "d-other"})
            out.append((await post(replay)).status_code)
            return out
    assert asyncio.run(run()) == [503, 200, (200, "duplicate"), 401], "the retry is handled; a handled signature is never taken again"
    assert len(calls) == 2


def test_the_receiver_mounts_in_fastapi():
    """The ASGI receiver inside a FastAPI app: signed deliveries reach on_event, unsigned ones get 401."""
    import hashlib
    import hmac
    import time

    from fastapi import FastAPI

    events = []
    app = FastAPI()
    app.mount("/resume", asgi_receiver("s3cret", events.append))
    body = json.dumps({"event": "question.expired", "question": {"id": "q1", "status": "expired"}, "run": {"id": "r2"}, "user_message": "no answer"}).encode()
    ts = str(int(time.time()))
    v2 = hmac.new(b"s3cret", f"{ts}.d-1.".encode() + body, hashlib.sha256).hexdigest()

    async def run():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://recv") as c:
            ok = await c.post("/resume/", content=body, headers={"x-askbridge-signature": f"t={ts},v2={v2}", "x-askbridge-delivery": "d-1"})
            bad = await c.post("/resume/", content=body, headers={"x-askbridge-delivery": "d-2"})
            return ok.status_code, bad.status_code
    assert asyncio.run(run()) == (200, 401)
    assert [e["event"] for e in events] == ["question.expired"]


def test_the_agents_trace_context_goes_with_every_request_and_a_malformed_one_is_not_sent(bridge):
    trace = "4bf92f3577b34da6a3ce929d0e0e4736"
    tp = f"00-{trace}-00f067aa0ba902b7-01"
    c = Client(url=bridge.url, project=bridge.project, traceparent=tp, tracestate="vendor=1")
    try:
        q = c.ask({"run_id": "r-trace", "agent_id": "bot", "question": "Ship it?",
                   "options": [{"label": "Yes"}, {"label": "No"}], "timeout": "5m"})
        res = httpx.get(f"{bridge.url}/api/projects/{bridge.project}/agent-questions/{q['id']}")
        assert res.status_code == 200
        assert res.headers.get("traceparent", "").startswith(f"00-{trace}-"), "the question carries the agent's trace"
    finally:
        c.close()
    for bad in ["00-zz-00f067aa0ba902b7-01", tp + "\r\nx-evil: 1", f"00-{'0' * 32}-00f067aa0ba902b7-01"]:
        c = Client(url=bridge.url, project=bridge.project, traceparent=bad)
        try:
            assert c._trace == {}, bad
        finally:
            c.close()


def test_the_list_reads_every_page(bridge):
    ids = [bridge.ask({"run_id": f"p{i}", "agent_id": "bot", "question": f"Deploy {i}?"})["id"] for i in range(7)]
    first = bridge.list_page(status="pending", limit=3)
    assert [q["id"] for q in first["questions"]] == ids[:3]
    assert isinstance(first["next_cursor"], str)
    second = bridge.list_page(status="pending", limit=3, cursor=first["next_cursor"])
    assert [q["id"] for q in second["questions"]] == ids[3:6]
    last = bridge.list_page(status="pending", limit=3, cursor=second["next_cursor"])
    assert [q["id"] for q in last["questions"]] == ids[6:] and last["next_cursor"] is None
    assert [q["id"] for q in bridge.iterate(status="pending", limit=2)] == ids, "every page, oldest first"
    assert [q["id"] for q in bridge.list(status="pending")] == ids
    with pytest.raises(AskBridgeError) as e:
        bridge.list_page(cursor="nope")
    assert e.value.code == "invalid" and e.value.field == "cursor"

    async def go():
        async with AsyncClient(url=bridge.url, project=bridge.project) as c:
            page = await c.list_page(status="pending", limit=4)
            assert len(page["questions"]) == 4 and page["next_cursor"]
            assert [q["id"] async for q in c.iterate(status="pending", limit=3)] == ids
            assert [q["id"] for q in await c.list(status="pending")] == ids

    asyncio.run(go())
