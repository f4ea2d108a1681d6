"""The API's request bodies and records as TypedDicts (docs/openapi.yaml).

They are plain dicts at run time; a type checker (mypy, pyright) refuses a
field the API does not know (``{"timout": "10s"}``), a missing required one
(an option without ``label``) and a value of the wrong type.
"""

from typing import Any, Literal, Required, TypedDict

Status = Literal["pending", "answered", "cancelled", "expired"]
Kind = Literal["question", "approval"]
CancelReason = Literal["agent", "user"]


class Image(TypedDict):
    url: str  # https only
    alt: str


class Option(TypedDict, total=False):
    label: Required[str]
    description: str
    value: str  # defaults to the label
    recommended: bool
    veto: bool
    default: bool
    image: Image


class ShowIf(TypedDict, total=False):
    item: Required[int]
    any_of: list[str]
    none_of: list[str]


class NumberRule(TypedDict, total=False):
    min: float
    max: float
    integer: bool


class FreeTextRules(TypedDict, total=False):
    pattern: str
    min_length: int
    max_length: int
    number: NumberRule
    hint: str


class Item(TypedDict, total=False):
    question: Required[str]
    header: str
    multiSelect: bool
    options: list[Option]
    show_if: ShowIf
    other: FreeTextRules
    image: Image


class Target(TypedDict, total=False):
    platform: Required[Literal["slack", "discord", "telegram", "email"]]
    channel: str
    thread_ts: str
    to: list[str]
    chat: str
    thread: int | str
    message_ts: str
    url: str
    error: str


class Responders(TypedDict, total=False):
    users: list[str]
    slack_usergroups: list[str]
    discord_roles: list[str]
    telegram_chat_admins: list[str]
    email_domains: list[str]
    pagerduty_schedules: list[str]
    pagerduty_escalation_policies: list[str]
    exclude_requester: bool


class OnTimeout(TypedDict, total=False):
    answer: str
    use_defaults: bool


class Resume(TypedDict):
    url: str


class ActionRequest(TypedDict, total=False):
    tool: Required[str]
    input: dict[str, Any]
    digest: str
    suggestions: list[dict[str, Any]]
    allow_edit: bool
    call_id: str  # the framework's id of the tool call: keys the approval in its run


class AskBody(TypedDict, total=False):
    """The body of ``ask``: ``questions`` (1-4 items), or the shorthand
    ``question`` + ``options`` for one item."""

    run_id: str
    agent_id: str
    agent_name: str
    parent_run_id: str
    kind: Kind
    questions: list[Item]
    question: str
    header: str
    multiSelect: bool
    options: list[Option]
    other: FreeTextRules
    image: Image
    context: str
    context_image: Image
    targets: list[Target]
    route: str
    responders: Responders
    timeout: str | int | float  # "30m", or seconds
    resume: Resume
    idempotency_key: str
    requested_by: str
    approvals_required: int
    on_timeout: OnTimeout
    action: ActionRequest


class PersonRequest(TypedDict, total=False):
    platform: Required[str]
    id: Required[str]
    name: str


class RespondBody(TypedDict, total=False):
    response: str
    answers: dict[str, str | list[str]]
    edited_input: dict[str, Any]
    rule: int
    digest: str
    reason: str
    responded_by: PersonRequest | str


class Person(TypedDict, total=False):
    platform: Required[str]
    id: Required[str]
    name: str
    via: str


class Vote(TypedDict):
    by: Person
    label: str
    at: str


class Skipped(TypedDict):
    question: str
    reason: str


class PastAnswer(TypedDict, total=False):
    question_id: Required[str]
    answer: Required[str]
    answers: dict[str, str]
    selections: dict[str, list[str]]
    responded_by: Person
    responded_at: Required[str]
    defaulted: bool


class Remark(TypedDict, total=False):
    kind: Required[str]
    text: Required[str]
    by: str
    at: Required[str]


class Page(TypedDict, total=False):
    pager: str
    profile: str


class EscalationStep(TypedDict, total=False):
    after: Required[str]
    remind: bool
    targets: list[Target]
    responders: Responders
    page: Page


class Action(TypedDict, total=False):
    tool: Required[str]
    input: Required[dict[str, Any]]
    digest: Required[str]
    diff: str
    suggestions: list[dict[str, Any]]
    allow_edit: bool
    call_id: str


class Decision(TypedDict, total=False):
    behavior: Required[Literal["allow", "deny"]]
    digest: Required[str]
    input: dict[str, Any]
    edited: bool
    rules: list[dict[str, Any]]
    message: str
    auto_rule: str


class EditedAction(TypedDict, total=False):
    tool: Required[str]
    input: Required[dict[str, Any]]
    digest: Required[str]
    by: Person


class Question(TypedDict, total=False):
    """The record of one question, as every call returns it. Times are
    RFC 3339 strings. ``message`` (a sentence for the agent's tool result)
    comes with ``ask`` only."""

    id: Required[str]
    project_id: Required[str]
    run_id: Required[str]
    agent_id: Required[str]
    agent_name: str
    kind: Required[Kind]
    status: Required[Status]
    questions: Required[list[Item]]
    context: str
    context_image: Image
    targets: Required[list[Target]]
    responders: Required[Responders]
    answers: dict[str, str]
    selections: dict[str, list[str]]
    response: str
    free_text: list[str]
    skipped: list[Skipped]
    responded_by: Person
    responded_at: str
    cancel_reason: Literal["user", "agent", "superseded"]
    cancel_note: str
    reason: str
    created_at: Required[str]
    updated_at: Required[str]
    expires_at: Required[str]
    resumed_run_id: str
    resume: Resume
    route: str
    requested_by: str
    approvals_required: int
    votes: list[Vote]
    on_timeout: OnTimeout
    defaulted: bool
    history: list[PastAnswer]
    escalation: list[EscalationStep]
    escalation_level: int
    remarks: list[Remark]
    idempotency_key: str
    action: Action
    decision: Decision
    edited_action: EditedAction
    applied_rule: int
    batch_id: str  # the batch of parallel approvals it belongs to
    message: str


class QuestionPage(TypedDict):
    """One page of a list: at most ``limit`` records, oldest first, and the
    cursor of the next page (None on the last)."""

    questions: list[Question]
    next_cursor: str | None


class Answered(TypedDict):
    """What ``respond`` returns: the question, its status and the run the
    answer resumes (the continuation run in webhook mode)."""

    id: str
    status: Status
    run_id: str


class Run(TypedDict, total=False):
    id: Required[str]
    project_id: Required[str]
    agent_id: Required[str]
    status: Required[Literal["running", "paused", "resumed"]]
    resumed_from: str
    resumed_run_id: str
    created_at: Required[str]
    updated_at: Required[str]


class ApprovalOutcome(TypedDict):
    """What a final approval record means (``approval_outcome``)."""

    approved: bool
    input: dict[str, Any] | None
    edited: bool
    always: bool
    reason: str | None
    status: Status


class BatchCall(TypedDict, total=False):
    """One tool call of a batch: its action (with ``call_id``), or at least a
    question. ``question`` defaults to "Allow <tool>: <main argument>?",
    ``options`` to Allow and Deny."""

    question: str
    header: str
    options: list[Option]
    context: str  # shown with this call, after the batch's context
    idempotency_key: str
    action: ActionRequest


class BatchBody(TypedDict, total=False):
    """The body of ``ask_approval_batch``: what the calls share, and one
    entry per tool call (1-50)."""

    run_id: str
    agent_id: str
    agent_name: str
    parent_run_id: str
    context: str
    targets: list[Target]
    route: str
    responders: Responders
    timeout: str | int | float
    resume: Resume  # webhook mode: each call's decision is sent on its own, all naming one continuation run
    requested_by: str
    approvals: Required[list[BatchCall]]


class Batch(TypedDict):
    """A batch of approvals: its calls in the order they were asked.
    ``status`` is "pending" while any call waits for a decision."""

    batch_id: str
    project_id: str
    run_id: str
    agent_id: str
    status: Literal["pending", "decided"]
    pending: int
    questions: list[Question]


class BatchAsked(Batch):
    """What ``ask_approval_batch`` returns: the batch, this request's calls in
    its order (a call asked before is its earlier record), and a sentence
    for the agent."""

    calls: list[Question]
    message: str


class BatchRespondBody(TypedDict, total=False):
    """Allow all or Deny all (operators)."""

    decision: Required[Literal["allow", "deny"]]
    reason: str  # deny only
    questions: list[str]  # only these calls (the ones the person saw)
    responded_by: str | PersonRequest


class Refusal(TypedDict):
    id: str
    code: str
    message: str


class BatchOutcome(Batch):
    """The batch after Allow all / Deny all, and what became of each call."""

    decided: list[str]
    voted: list[str]
    already: list[str]  # decided before: they keep their decision
    refused: list[Refusal]
