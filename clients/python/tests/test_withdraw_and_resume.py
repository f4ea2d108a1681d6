"""The agent's side of ending and resuming: a cancel is the agent withdrawing
unless it says otherwise, and in webhook mode an answer resumes a run only
after pause_run (the snippet of docs/python.md, run as written)."""

import asyncio
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from askbridge import AskBridgeError, AsyncClient, approval_outcome
from conftest import MARIA

DOC = Path(__file__).resolve().parents[3] / "docs" / "python.md"


def doc_block(containing):
    """The one ```python block of docs/python.md that contains the text."""
    blocks = [b for b in re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S) if containing in b]
    assert len(blocks) == 1, f"docs/python.md has {len(blocks)} python blocks with {containing!r}"
    return blocks[0]


def test_cancel_with_no_reason_is_the_agent_withdrawing(bridge):
    q = bridge.ask({"run_id": "wd", "question": "Deploy?", "options": [{"label": "Yes"}, {"label": "No"}]})
    c = bridge.cancel(q["id"])
    assert (c["status"], c["cancel_reason"]) == ("cancelled", "agent")
    assert approval_outcome(c)["reason"] == "withdrawn by the agent"
    noted = bridge.cancel(bridge.ask({"run_id": "wd2", "question": "Again?"})["id"], note="the user changed plans")
    assert (noted["cancel_reason"], noted["cancel_note"]) == ("agent", "the user changed plans")
    # A person's dismissal is said so.
    assert bridge.cancel(bridge.ask({"run_id": "wd3", "question": "Once more?"})["id"], reason="user")["cancel_reason"] == "user"

    async def main():
        async with AsyncClient(url=bridge.url, project=bridge.project) as c:
            q = await c.ask({"run_id": "wd4", "question": "Async?"})
            return (await c.cancel(q["id"]))["cancel_reason"]
    assert asyncio.run(main()) == "agent"


class _Receiver:
    """A loopback resume URL that keeps what the bridge posts."""

    def __init__(self):
        got = self.deliveries = []

        class H(BaseHTTPRequestHandler):
            def do_POST(self):
                got.append(self.rfile.read(int(self.headers["Content-Length"])))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *a):
                pass

        self.srv = HTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.srv.server_address[1]}/resume"
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def wait(self, count=1, timeout=15.0):
        until = time.monotonic() + timeout
        while len(self.deliveries) < count and time.monotonic() < until:
            time.sleep(0.05)
        return self.deliveries

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


@pytest.fixture
def receiver():
    r = _Receiver()
    yield r
    r.close()


def test_an_answer_resumes_a_run_only_after_pause_run(bridge, receiver):
    q = bridge.ask({"run_id": "wh-1", "question": "Deploy to prod?", "options": [{"label": "Yes"}, {"label": "No"}],
                    "resume": {"url": receiver.url}})
    with pytest.raises(AskBridgeError) as e:
        bridge.respond(q["id"], {"response": "Yes", "responded_by": MARIA})
    assert (e.value.status, e.value.code) == (409, "run_not_paused")
    assert bridge.get(q["id"])["status"] == "pending", "the refused answer is not kept"
    bridge.pause_run("wh-1")
    bridge.respond(q["id"], {"response": "Yes", "responded_by": MARIA})
    assert len(receiver.wait()) == 1


def test_the_docs_webhook_snippet_pauses_the_run(bridge, receiver):
    saved = {}
    code = doc_block("pause_run").replace("https://agent.example.com/resume", receiver.url)
    exec(code, {"bridge": bridge, "run_id": "wh-doc", "state": {"step": 3}, "save_state": saved.__setitem__})
    (qid, state), = saved.items()
    assert state == {"step": 3}
    bridge.respond(qid, {"response": "Yes", "responded_by": MARIA})  # no run_not_paused
    assert b'"resumed_from":"wh-doc"' in receiver.wait()[0]
