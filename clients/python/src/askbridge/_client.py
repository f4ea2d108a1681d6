from __future__ import annotations

import asyncio
import builtins
import math
import os
import re
import time
from datetime import datetime
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any, cast
from urllib.parse import quote, urlencode

import httpx

from ._types import (
    ActionRequest,
    Answered,
    ApprovalOutcome,
    AskBody,
    Batch,
    BatchAsked,
    BatchBody,
    BatchCall,
    BatchOutcome,
    BatchRespondBody,
    CancelReason,
    Question,
    QuestionPage,
    RespondBody,
    Run,
)

# A question's record, as every call returns it.
Record = Question


def _list_path(status: str | None, limit: int | None, cursor: str | None) -> str:
    q = {k: v for k, v in (("status", status), ("limit", limit), ("cursor", cursor)) if v}
    return "/agent-questions" + ("?" + urlencode(q) if q else "")


class AskBridgeError(Exception):
    """An error of the bridge or of reaching it.

    ``code`` is the API's error code (``invalid``, ``not_found``,
    ``already_answered``...), or ``unreachable`` when the bridge could not be
    reached, ``wait_timeout`` when a client deadline passed.
    """

    def __init__(self, code: str, message: str, status: int = 0, details: list[dict[str, str]] | None = None):
        self.code = code
        self.status = status
        self.details = details or []
        self.field = self.details[0]["field"] if self.details else None
        self.message = message
        text = message
        if self.details:
            text += ": " + "; ".join(f"{d['field']}: {d['problem']}" for d in self.details)
        super().__init__(text)


class WaitTimeout(AskBridgeError):
    """The client deadline passed while the question is still pending; it stays
    pending and a later wait returns the answer."""

    def __init__(self, question: Record):
        self.question = question
        super().__init__(
            "wait_timeout",
            f"question {question['id']} is still pending after the wait's deadline; "
            "it stays open and a later wait returns the answer",
        )


class BatchWaitTimeout(AskBridgeError):
    """The client deadline passed while calls of the batch are still pending;
    they stay pending and a later wait returns them decided."""

    def __init__(self, batch: Batch):
        self.batch = batch
        super().__init__(
            "wait_timeout",
            f"batch {batch['batch_id']} still has {batch['pending']} pending call(s) after the wait's deadline; "
            "they stay open and a later wait returns the decisions",
        )


_OTHER_OPTION_PROBLEM = (
    'remove the "Other" option; the person can always answer in their own words ("Other" is added automatically)'
)


def _is_other_label(label: str) -> bool:
    """Whether a label is the free-text "Other" every surface adds by itself
    ("Other", "Something else", ...), as the bridge decides it."""
    return label.strip().lower().rstrip(".…: ") in ("other", "other (please specify)", "other (specify)", "something else")


def validate_ask(body: AskBody | Mapping[str, Any]) -> None:
    """Refuses, before anything is sent, what the bridge would surely refuse,
    with the API's messages. The bridge checks everything again."""
    details: list[dict[str, str]] = []

    def add(field: str, problem: str) -> None:
        details.append({"field": field, "problem": problem})

    if "questions" in body and "question" in body:
        add("question", "use either questions[] or the question+options shorthand, not both")
    shorthand = "questions" not in body and ("question" in body or "options" in body)
    items: list[Any]  # checked here as the bridge would: the caller's dict may be anything
    if shorthand:
        if not body.get("question"):
            add("question", "required with options")
        items = [{"question": body.get("question") or "", "header": body.get("header"), "options": body.get("options")}]
    else:
        items = list(body.get("questions") or [])
        if not items:
            add("questions", "at least 1 question is required")
        if len(items) > 4:
            add("questions", f"at most 4 questions, got {len(items)}")
    for i, it in enumerate(items):
        def f(name: str, i: int = i) -> str:
            return name if shorthand else f"questions[{i}].{name}"

        text = it.get("question") if isinstance(it, dict) else None
        if not isinstance(text, str) or not text.strip():
            if not shorthand:
                add(f("question"), "required")
            continue
        for j, prev in enumerate(items[:i]):
            if isinstance(prev, dict) and prev.get("question") == text:
                add(f("question"), f"same text as questions[{j}]; each question must be distinct")
        header = it.get("header")
        if isinstance(header, str) and len(header) > 12:
            add(f("header"), "at most 12 characters")
        opts = it.get("options") or []
        if opts and not 2 <= len(opts) <= 4:
            add(f("options"), f"2 to 4 options, or none for an open-ended question; got {len(opts)}")
        labels: list[str] = []
        for k, o in enumerate(opts):
            label = o.get("label") if isinstance(o, dict) else None
            of = f"{f('options')}[{k}].label"
            if not isinstance(label, str) or not label.strip():
                add(of, "required")
                continue
            if _is_other_label(label):
                add(of, _OTHER_OPTION_PROBLEM)
                labels.append(label)
                continue
            if label in labels:
                add(of, f"same label as options[{labels.index(label)}]; labels must be unique within a question")
            labels.append(label)
    if body.get("parent_run_id"):
        raise AskBridgeError("subagent_not_allowed", "only parent conversations can ask user questions")
    if details:
        raise AskBridgeError("invalid", "the question is not valid", 0, details)


def _settings(url: str | None, token: str | None, project: str | None) -> tuple[str, str | None, str]:
    url = url or os.environ.get("BRIDGE_URL")
    if not url:
        raise AskBridgeError("invalid", "no bridge URL: pass url= or set BRIDGE_URL (e.g. http://127.0.0.1:8080)")
    return url.rstrip("/"), token or os.environ.get("BRIDGE_TOKEN"), project or os.environ.get("BRIDGE_PROJECT") or "default"


_TRACEPARENT = re.compile(r"^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$")


def _trace_headers(traceparent: str | None, tracestate: str | None) -> dict[str, str]:
    """The agent's W3C trace context (default TRACEPARENT/TRACESTATE), sent on every request
    so the question's spans join the agent's trace; a malformed traceparent is not sent."""
    tp = (traceparent if traceparent is not None else os.environ.get("TRACEPARENT", "")).strip()
    if not _TRACEPARENT.match(tp) or tp.startswith("ff-"):
        return {}
    _, trace, span, _ = tp.split("-")
    if set(trace) == {"0"} or set(span) == {"0"}:
        return {}
    h = {"traceparent": tp}
    ts = (tracestate if tracestate is not None else os.environ.get("TRACESTATE", "")).strip()
    if ts and "\r" not in ts and "\n" not in ts:
        h["tracestate"] = ts
    return h


def _headers(token: str | None) -> dict[str, str]:
    h = {"accept": "application/json"}
    if token:
        h["authorization"] = f"Bearer {token}"
    return h


def _result(url: str, res: httpx.Response) -> Any:
    try:
        data = res.json() if res.content else None
    except ValueError:
        data = None
    if res.status_code >= 400:
        err = data.get("error") if isinstance(data, dict) else None
        if isinstance(err, dict):
            raise AskBridgeError(err.get("code", f"http_{res.status_code}"), err.get("message", ""), res.status_code, err.get("details") or [])
        raise AskBridgeError(f"http_{res.status_code}", f"the bridge at {url} answered {res.status_code}: {res.text[:200]}", res.status_code)
    return data


def _cancel_body(reason: str | None, note: str | None) -> dict[str, str]:
    # This client is the agent's: no reason means the agent withdrew it,
    # whatever the bridge assumes for a caller without an agent token.
    body = {"reason": reason or "agent"}
    if note:
        body["note"] = note
    return body


def _unreachable(url: str, err: Exception) -> AskBridgeError:
    return AskBridgeError("unreachable", f"the bridge at {url} is not reachable ({err.__class__.__name__}: {err}); is askbridge serve running there?")


UNREACHABLE_LIMIT = 120.0
"""How long (seconds) a wait keeps retrying while the bridge cannot be reached
or answers 502/503/504 (a restart, a redeploy) before it raises the error."""


class _Outage:
    """A wait's retries while the bridge is away: a restart answers the waits
    (still pending) and leaves the address unanswered for a moment."""

    def __init__(self, limit: float):
        self.limit = limit
        self.since: float | None = None
        self.backoff = 0.5

    def pause(self, err: AskBridgeError, deadline: float) -> float:
        """Seconds to sleep before the next try; raises err when it is not a
        bridge away, or the limit or the deadline has passed."""
        if err.code != "unreachable" and err.status not in (502, 503, 504):
            raise err
        now = time.monotonic()
        if self.since is None:
            self.since = now
        if now - self.since >= self.limit or now >= deadline:
            raise err
        pause = min(self.backoff, deadline - now)
        self.backoff = min(self.backoff * 2, 5.0)
        return pause

    def over(self) -> None:
        self.since, self.backoff = None, 0.5


def _poll_secs(deadline: float, poll: int) -> int:
    """One long-poll's length: ``poll`` seconds (at most 120), less near the deadline."""
    left = deadline - time.monotonic()
    return max(1, min(poll, 120, math.ceil(left) if left != math.inf else poll))


class _Paths:
    url: str
    project: str

    def _p(self, rest: str) -> str:
        return f"{self.url}/api/projects/{quote(self.project, safe='')}{rest}"

    @staticmethod
    def _q(id: str) -> str:
        return quote(id, safe="")


class Client(_Paths):
    """The blocking client of one bridge and project (usable inside any framework's tool)."""

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        project: str | None = None,
        *,
        http: httpx.Client | None = None,
        traceparent: str | None = None,
        tracestate: str | None = None,
    ):
        self.url, token, self.project = _settings(url, token, project)
        self._http = http or httpx.Client(headers=_headers(token), timeout=httpx.Timeout(10.0, read=130.0))
        self._trace = _trace_headers(traceparent, tracestate)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        try:
            res = self._http.request(method, self._p(path), json=body, headers=self._trace)
        except httpx.TransportError as err:
            raise _unreachable(self.url, err) from err
        return _result(self.url, res)

    def ask(self, body: AskBody) -> Record:
        """Asks: the record (status pending) with ``message`` for the agent."""
        validate_ask(body)
        return self._call("POST", "/agent-questions", body)

    def wait(self, id: str, timeout: float | None = None, *, poll: int = 25, unreachable: float = UNREACHABLE_LIMIT) -> Record:
        """Waits until the question is final, looping the long-poll. With
        ``timeout`` (seconds) raises WaitTimeout when it passes; the question
        stays pending and a later wait returns its answer. It carries on
        through a restart of the bridge, retrying for up to ``unreachable``
        seconds without an answer."""
        deadline = math.inf if timeout is None else time.monotonic() + timeout
        outage = _Outage(unreachable)
        while True:
            left = deadline - time.monotonic()
            secs = max(1, min(poll, 120, math.ceil(left) if left != math.inf else poll))
            try:
                q = self._call("GET", f"/agent-questions/{self._q(id)}/wait?timeout={secs}s")
            except AskBridgeError as err:
                time.sleep(outage.pause(err, deadline))
                continue
            outage.over()
            if q["status"] != "pending":
                return q
            if time.monotonic() >= deadline:
                raise WaitTimeout(q)

    def ask_and_wait(self, body: AskBody, timeout: float | None = None) -> Record:
        """Asks and waits for the final record."""
        q = self.ask(body)
        return q if q["status"] != "pending" else self.wait(q["id"], timeout)

    def get(self, id: str) -> Record:
        return self._call("GET", f"/agent-questions/{self._q(id)}")

    def list(self, status: str | None = None, run_id: str | None = None) -> builtins.list[Record]:
        """Every record of the project, oldest first, read page after page to
        the last (``iterate`` yields them as the pages come); ``status``
        filters, ``run_id`` lists one run's."""
        if run_id:
            qs = self._call("GET", f"/agent-runs/{self._q(run_id)}/questions")["questions"]
            return [q for q in qs if status is None or q["status"] == status]
        return builtins.list(self.iterate(status=status))

    def list_page(self, status: str | None = None, limit: int | None = None, cursor: str | None = None) -> QuestionPage:
        """One page of the project's records, oldest first: ``{"questions": [...],
        "next_cursor": ...}`` with at most ``limit`` (1-1000; the bridge's
        default 500) from ``cursor`` (the previous page's ``next_cursor``) on.
        ``next_cursor`` is None on the last page; a page may be short, even
        empty, before it."""
        return self._call("GET", _list_path(status, limit, cursor))

    def iterate(self, status: str | None = None, limit: int | None = None) -> Iterator[Record]:
        """Yields every record of the project, oldest first, reading the pages as it goes."""
        cursor = None
        while True:
            page = self.list_page(status=status, limit=limit or 1000, cursor=cursor)
            yield from page["questions"]
            cursor = page.get("next_cursor")
            if not cursor:
                return

    def cancel(self, id: str, reason: CancelReason = "agent", note: str | None = None) -> Record:
        """Withdraws the question: the agent no longer waits (reason "agent",
        the default), or records a person's dismissal (reason "user"). The
        note shows on every copy."""
        return self._call("POST", f"/agent-questions/{self._q(id)}/cancel", _cancel_body(reason, note))

    def respond(self, id: str, body: RespondBody) -> Answered:
        """Answers (an operator's token, or a bridge without tokens)."""
        return self._call("POST", f"/agent-questions/{self._q(id)}/respond", body)

    def pause_run(self, run_id: str) -> Run:
        """Reports that a run's process stopped (webhook mode)."""
        return self._call("POST", f"/agent-runs/{self._q(run_id)}/pause", {})

    def ask_approval_batch(self, body: BatchBody) -> BatchAsked:
        """Asks several approvals of one run as one batch, in one request: one
        entry per tool call, each keyed by its ``action["call_id"]``. People
        see them together and decide them one by one or with Allow all / Deny
        all; each call is its own record. Every entry is checked before any
        is asked. A call asked before (same call_id in the run) is not asked
        again: its record comes back in ``calls``, whatever its state."""
        return self._call("POST", "/approval-batches", body)

    def get_approval_batch(self, id: str) -> Batch:
        """A batch: its calls in the order they were asked, and how many are pending."""
        return self._call("GET", f"/approval-batches/{self._q(id)}")

    def wait_approval_batch(self, id: str, timeout: float | None = None, *, poll: int = 25,
                            unreachable: float = UNREACHABLE_LIMIT) -> Batch:
        """Waits until no call of the batch is pending (a call that joins it
        meanwhile is waited for too) and returns it with every call's final
        record. As ``wait``: ``timeout`` raises BatchWaitTimeout (the calls
        stay pending); a restart of the bridge is waited out. To act on each
        call as soon as it is decided, ``wait`` on each call's id instead."""
        deadline = math.inf if timeout is None else time.monotonic() + timeout
        outage = _Outage(unreachable)
        while True:
            try:
                b = self._call("GET", f"/approval-batches/{self._q(id)}/wait?timeout={_poll_secs(deadline, poll)}s")
            except AskBridgeError as err:
                time.sleep(outage.pause(err, deadline))
                continue
            outage.over()
            if b["status"] != "pending":
                return b
            if time.monotonic() >= deadline:
                raise BatchWaitTimeout(b)

    def respond_approval_batch(self, id: str, body: BatchRespondBody) -> BatchOutcome:
        """Allow all or Deny all (an operator's token, or a bridge without
        tokens): decides every still-pending call; calls decided already keep
        their decision (``already``)."""
        return self._call("POST", f"/approval-batches/{self._q(id)}/respond", body)


class AsyncClient(_Paths):
    """The asyncio client: the same methods, awaitable."""

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        project: str | None = None,
        *,
        http: httpx.AsyncClient | None = None,
        traceparent: str | None = None,
        tracestate: str | None = None,
    ):
        self.url, token, self.project = _settings(url, token, project)
        self._http = http or httpx.AsyncClient(headers=_headers(token), timeout=httpx.Timeout(10.0, read=130.0))
        self._trace = _trace_headers(traceparent, tracestate)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _call(self, method: str, path: str, body: Any = None) -> Any:
        try:
            res = await self._http.request(method, self._p(path), json=body, headers=self._trace)
        except httpx.TransportError as err:
            raise _unreachable(self.url, err) from err
        return _result(self.url, res)

    async def ask(self, body: AskBody) -> Record:
        validate_ask(body)
        return await self._call("POST", "/agent-questions", body)

    async def wait(self, id: str, timeout: float | None = None, *, poll: int = 25, unreachable: float = UNREACHABLE_LIMIT) -> Record:
        deadline = math.inf if timeout is None else time.monotonic() + timeout
        outage = _Outage(unreachable)
        while True:
            left = deadline - time.monotonic()
            secs = max(1, min(poll, 120, math.ceil(left) if left != math.inf else poll))
            try:
                q = await self._call("GET", f"/agent-questions/{self._q(id)}/wait?timeout={secs}s")
            except AskBridgeError as err:
                await asyncio.sleep(outage.pause(err, deadline))
                continue
            outage.over()
            if q["status"] != "pending":
                return q
            if time.monotonic() >= deadline:
                raise WaitTimeout(q)

    async def ask_and_wait(self, body: AskBody, timeout: float | None = None) -> Record:
        q = await self.ask(body)
        return q if q["status"] != "pending" else await self.wait(q["id"], timeout)

    async def get(self, id: str) -> Record:
        return await self._call("GET", f"/agent-questions/{self._q(id)}")

    async def list(self, status: str | None = None, run_id: str | None = None) -> builtins.list[Record]:
        if run_id:
            qs = (await self._call("GET", f"/agent-runs/{self._q(run_id)}/questions"))["questions"]
            return [q for q in qs if status is None or q["status"] == status]
        return [q async for q in self.iterate(status=status)]

    async def list_page(self, status: str | None = None, limit: int | None = None, cursor: str | None = None) -> QuestionPage:
        return await self._call("GET", _list_path(status, limit, cursor))

    async def iterate(self, status: str | None = None, limit: int | None = None) -> AsyncIterator[Record]:
        cursor = None
        while True:
            page = await self.list_page(status=status, limit=limit or 1000, cursor=cursor)
            for q in page["questions"]:
                yield q
            cursor = page.get("next_cursor")
            if not cursor:
                return

    async def cancel(self, id: str, reason: CancelReason = "agent", note: str | None = None) -> Record:
        return await self._call("POST", f"/agent-questions/{self._q(id)}/cancel", _cancel_body(reason, note))

    async def respond(self, id: str, body: RespondBody) -> Answered:
        return await self._call("POST", f"/agent-questions/{self._q(id)}/respond", body)

    async def pause_run(self, run_id: str) -> Run:
        return await self._call("POST", f"/agent-runs/{self._q(run_id)}/pause", {})

    async def ask_approval_batch(self, body: BatchBody) -> BatchAsked:
        return await self._call("POST", "/approval-batches", body)

    async def get_approval_batch(self, id: str) -> Batch:
        return await self._call("GET", f"/approval-batches/{self._q(id)}")

    async def wait_approval_batch(self, id: str, timeout: float | None = None, *, poll: int = 25,
                                  unreachable: float = UNREACHABLE_LIMIT) -> Batch:
        deadline = math.inf if timeout is None else time.monotonic() + timeout
        outage = _Outage(unreachable)
        while True:
            try:
                b = await self._call("GET", f"/approval-batches/{self._q(id)}/wait?timeout={_poll_secs(deadline, poll)}s")
            except AskBridgeError as err:
                await asyncio.sleep(outage.pause(err, deadline))
                continue
            outage.over()
            if b["status"] != "pending":
                return b
            if time.monotonic() >= deadline:
                raise BatchWaitTimeout(b)

    async def respond_approval_batch(self, id: str, body: BatchRespondBody) -> BatchOutcome:
        return await self._call("POST", f"/approval-batches/{self._q(id)}/respond", body)


def _action(tool: str, input: dict[str, Any] | None, call_id: str, allow_edit: bool, always_allow: bool) -> ActionRequest:
    action: ActionRequest = {"tool": tool, "input": input or {}, "call_id": call_id}
    if not allow_edit:
        action["allow_edit"] = False
    if always_allow:
        action["suggestions"] = [{"type": "always_allow", "tool": tool}]
    return action


def approval_body(run_id: str, call_id: str, tool: str, input: dict[str, Any] | None = None, *, allow_edit: bool = False,
                  always_allow: bool = False, question: str | None = None, resume_url: str | None = None, **ask: Any) -> AskBody:
    """The ask body of one tool call's approval in run ``run_id``, keyed by
    ``call_id`` (``action["call_id"]``): asking about the same call again
    re-attaches to its record, and the approvals of distinct calls coexist
    in the run (asked close together, they form one batch). ``allow_edit``
    only when the caller can run edited arguments."""
    body = cast(AskBody, {**ask, "kind": "approval", "run_id": run_id, "question": question or f"Allow {tool}?",
                          "options": [{"label": "Allow"}, {"label": "Deny"}],
                          "action": _action(tool, input, call_id, allow_edit, always_allow)})
    if resume_url:
        body["resume"] = {"url": resume_url}
    return body


def approval_call(call_id: str, tool: str, input: dict[str, Any] | None = None, *, allow_edit: bool = False,
                  always_allow: bool = False, question: str | None = None, context: str | None = None) -> BatchCall:
    """One tool call of ``ask_approval_batch``'s ``approvals``, keyed by
    ``call_id``; the question defaults to the bridge's "Allow <tool>: <main
    argument>?"."""
    call: BatchCall = {"action": _action(tool, input, call_id, allow_edit, always_allow)}
    if question:
        call["question"] = question
    if context:
        call["context"] = context
    return call


def _parse_time(s: str) -> datetime:
    s = s.replace("Z", "+00:00")
    if "." in s:  # Go writes up to 9 fractional digits; fromisoformat takes 6
        head, rest = s.split(".", 1)
        i = next((k for k, c in enumerate(rest) if not c.isdigit()), len(rest))
        s = f"{head}.{rest[:i][:6].ljust(6, '0')}{rest[i:]}"
    return datetime.fromisoformat(s)


def format_duration(seconds: float) -> str:
    s = max(0, round(seconds))
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    parts = [f"{h} h"] * bool(h) + [f"{m} min"] * bool(m)
    if s or not parts:
        parts.append(f"{s} s")
    return " ".join(parts)


def approval_outcome(q: Question) -> ApprovalOutcome:
    """What a final approval record means: ``{approved, input, edited, always,
    reason}``. Expiry and dismissal never approve; the reason says why."""
    who = q.get("responded_by")
    name = (who.get("name") or who.get("id") if who else None) or "someone"
    out: ApprovalOutcome = {"approved": False, "input": None, "edited": False, "always": False, "reason": None, "status": q["status"]}
    status = q["status"]
    if status == "answered":
        d = q.get("decision")
        if d and d.get("behavior") == "allow":
            action = q.get("action")
            out["approved"], out["edited"], out["always"] = True, bool(d.get("edited")), bool(d.get("rules"))
            out["input"] = d["input"] if "input" in d else (action["input"] if action else {})
        elif d:
            out["reason"] = d.get("message") or f"denied by {name}"
        else:
            out["reason"] = q.get("reason") or f"the answer was not an approval: {q.get('response', '')}"
    elif status == "expired":
        took = (_parse_time(q["expires_at"]) - _parse_time(q["created_at"])).total_seconds()
        out["reason"] = f"nobody answered within {format_duration(took)}"
    elif status == "cancelled":
        note = f": {q['cancel_note']}" if q.get("cancel_note") else ""
        reason = q.get("cancel_reason")
        if reason == "user":
            out["reason"] = (f"dismissed by {name}" if who else "dismissed") + note
        elif reason == "superseded":
            out["reason"] = f"superseded by a newer question of this run{note}"
        else:
            out["reason"] = f"withdrawn by the agent{note}"
    else:
        raise AskBridgeError("pending", f"approval {q['id']} is still pending; wait for it before reading the decision")
    return out
