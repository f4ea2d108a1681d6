"""Code a user writes against the package: a type checker passes all of it
(tests/test_types.py runs mypy --strict over it)."""

from askbridge import AskBody, AsyncClient, BatchBody, Client, Question, approval_body, approval_call, approval_outcome


def deploy(bridge: Client, run_id: str) -> str:
    body: AskBody = {"run_id": run_id, "question": "Which region?", "options": [{"label": "EU", "value": "eu"}, {"label": "US"}],
                     "timeout": "30m", "responders": {"users": ["slack:U0MARIA"]}, "resume": {"url": "https://agent.example.com/resume"}}
    q: Question = bridge.ask(body)
    bridge.pause_run(run_id)
    done = bridge.wait(q["id"], timeout=60)
    if done["status"] == "answered":
        return done.get("response", "")
    bridge.respond(q["id"], {"answers": {"Which region?": ["EU", "free text"]}, "responded_by": "slack:U0MARIA"})
    bridge.cancel(q["id"], note="not needed any more")
    return done.get("cancel_reason", "")


def approve(bridge: Client) -> bool:
    q = bridge.ask_and_wait(approval_body("run-1", "call-1", "deploy", {"env": "prod"}, allow_edit=True, timeout="10m"))
    d = approval_outcome(q)
    if d["approved"] and d["input"] is not None:
        return bool(d["input"]["env"] == "prod")
    return False


async def ask_async(bridge: AsyncClient) -> list[str]:
    q = await bridge.ask({"questions": [{"question": "Features?", "multiSelect": True, "options": [{"label": "A"}, {"label": "B"}]}]})
    await bridge.cancel(q["id"], reason="user")
    return [x["id"] for x in await bridge.list(status="pending")]


def approve_turn(bridge: Client, calls: list[tuple[str, str]]) -> dict[str, bool]:
    body: BatchBody = {"run_id": "turn-1", "timeout": "10m", "approvals": [approval_call(cid, "run", {"command": cmd}) for cid, cmd in calls]}
    asked = bridge.ask_approval_batch(body)
    done = bridge.wait_approval_batch(asked["batch_id"], timeout=600)
    out = bridge.respond_approval_batch(done["batch_id"], {"decision": "deny", "reason": "too late"})
    assert out["already"] is not None and done["pending"] == 0
    return {q["action"].get("call_id", ""): approval_outcome(q)["approved"] for q in done["questions"]}
