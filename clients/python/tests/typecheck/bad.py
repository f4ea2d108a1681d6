"""Mistakes a type checker catches: each line whose comment says error gets
exactly one error that contains the words after it, and no other line any
(tests/test_types.py)."""

from askbridge import Client


def mistakes(bridge: Client) -> None:
    bridge.ask({"question": "Deploy?", "timout": "10s"})  # error: "timout"
    bridge.ask({"question": "Deploy?", "options": [{"lable": "Yes"}, {"label": "No"}]})  # error: "lable"
    bridge.ask({"question": "Deploy?", "action": {"input": {}}})  # error: "tool"
    bridge.ask({"question": "Deploy?", "timeout": ["30m"]})  # error: "timeout"
    bridge.respond("id", {"respons": "Yes"})  # error: "respons"
    bridge.cancel("id", reason="dismissed")  # error: "cancel"
    q = bridge.get("id")
    q["stauts"]  # error: "stauts"
    if q["status"] == "done":  # error: Non-overlapping
        pass
    bridge.ask_approval_batch({"run_id": "r", "approvals": [{"run_id": "other"}]})  # error: "run_id"
    bridge.respond_approval_batch("b", {"decision": "allow all"})  # error: "decision"
