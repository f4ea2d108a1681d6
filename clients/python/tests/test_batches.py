"""Parallel tool calls: several approvals of one run asked as one batch in
one request, waited for together, decided one by one or all at once; each
call keyed by its call_id and read with its own decision."""

import asyncio
import os
import threading

import pytest

from askbridge import AskBridgeError, AsyncClient, BatchWaitTimeout, approval_body, approval_call, approval_outcome
from conftest import MARIA


def turn(bridge, run_id, n, **kw):
    return bridge.ask_approval_batch({"run_id": run_id, "agent_id": "bot", "timeout": "5m",
                                      "approvals": [approval_call(f"call-{i}", "deploy", {"env": f"e{i}"}, **kw) for i in range(1, n + 1)]})


def test_three_calls_are_one_batch_in_one_request_and_the_same_calls_reattach(bridge):
    asked = turn(bridge, "turn-1", 3)
    assert asked["pending"] == 3 and asked["status"] == "pending"
    assert [q["action"]["call_id"] for q in asked["calls"]] == ["call-1", "call-2", "call-3"]
    assert {q["batch_id"] for q in asked["calls"]} == {asked["batch_id"]}, "one batch"
    assert {q["run_id"] for q in asked["calls"]} == {"turn-1"}
    assert "3 approval" in asked["message"]
    # The process asks again (a restart): the same call ids re-attach, nothing new is asked.
    again = turn(bridge, "turn-1", 3)
    assert [q["id"] for q in again["calls"]] == [q["id"] for q in asked["calls"]]
    single = bridge.ask(approval_body("turn-1", "call-2", "deploy", {"env": "e2"}, agent_id="bot"))
    assert single["id"] == asked["calls"][1]["id"], "a single ask with the call's id re-attaches too"
    assert len(bridge.list(run_id="turn-1")) == 3
    b = bridge.get_approval_batch(asked["batch_id"])
    assert b["pending"] == 3 and [q["id"] for q in b["questions"]] == [q["id"] for q in asked["calls"]]


def test_a_per_call_mix_gives_each_call_its_own_decision(bridge):
    asked = turn(bridge, "turn-mix", 4, allow_edit=True)
    c1, c2, c3, c4 = asked["calls"]
    with pytest.raises(BatchWaitTimeout) as e:
        bridge.wait_approval_batch(asked["batch_id"], timeout=1.2)
    assert e.value.code == "wait_timeout" and e.value.batch["pending"] == 4, "the calls stay pending"

    def people():
        bridge.respond(c1["id"], {"response": "Allow", "responded_by": MARIA})
        bridge.respond(c2["id"], {"reason": "not e2", "responded_by": MARIA})
        bridge.respond(c3["id"], {"edited_input": {"env": "staging"}, "responded_by": MARIA})
        out = bridge.respond_approval_batch(asked["batch_id"], {"decision": "allow", "responded_by": MARIA})
        assert sorted(out["already"]) == sorted([c1["id"], c2["id"], c3["id"]]) and out["decided"] == [c4["id"]]

    t = threading.Timer(0.3, people)
    t.start()
    done = bridge.wait_approval_batch(asked["batch_id"], timeout=30)
    t.join()
    assert done["status"] == "decided" and done["pending"] == 0
    got = {q["action"]["call_id"]: approval_outcome(q) for q in done["questions"]}
    assert (got["call-1"]["approved"], got["call-1"]["input"]) == (True, {"env": "e1"})
    assert (got["call-2"]["approved"], got["call-2"]["reason"]) == (False, "not e2")
    assert (got["call-3"]["approved"], got["call-3"]["input"], got["call-3"]["edited"]) == (True, {"env": "staging"}, True)
    assert (got["call-4"]["approved"], got["call-4"]["input"]) == (True, {"env": "e4"})
    # Each call is its own record: its own wait returns the same decision.
    assert bridge.wait(c2["id"])["decision"]["message"] == "not e2"


def test_every_call_is_checked_before_any_is_asked(bridge):
    with pytest.raises(AskBridgeError) as e:
        bridge.ask_approval_batch({"run_id": "turn-bad", "approvals": [approval_call("c", "deploy"), approval_call("c", "deploy", {"env": "x"})]})
    assert e.value.status == 400 and e.value.field == "approvals[1].action.call_id"
    assert bridge.list(run_id="turn-bad") == []


def test_async_client_deny_all_with_a_reason():
    async def main():
        async with AsyncClient(url=os.environ["BRIDGE_URL"], project=f"{os.environ['BRIDGE_PROJECT']}-py-async-batch-{os.getpid()}") as b:
            asked = await b.ask_approval_batch({"run_id": "turn-a", "approvals": [approval_call(f"c{i}", "deploy", {"env": f"e{i}"}) for i in range(5)]})
            assert asked["pending"] == 5 and len({q["batch_id"] for q in asked["calls"]}) == 1
            waiting = asyncio.create_task(b.wait_approval_batch(asked["batch_id"]))
            await asyncio.sleep(0.2)
            out = await b.respond_approval_batch(asked["batch_id"], {"decision": "deny", "reason": "freeze", "responded_by": MARIA})
            assert len(out["decided"]) == 5 and out["refused"] == []
            done = await waiting
            assert (await b.get_approval_batch(asked["batch_id"])) == done
            return [approval_outcome(q)["reason"] for q in done["questions"]]

    assert asyncio.run(main()) == ["freeze"] * 5
