"""askbridge: ask people (Slack, Discord, Telegram, email, the web inbox; PagerDuty pages) from a Python agent.

    from askbridge import Client
    bridge = Client(url="http://127.0.0.1:8080", project="ops")
    record = bridge.ask_and_wait({"run_id": "run-1", "question": "Deploy?", "options": [...]})

Bodies are the API's JSON objects (dicts); records come back as dicts with
the API's field names (docs/openapi.yaml), typed as TypedDicts (AskBody,
Question, RespondBody...) so a type checker refuses an unknown field.
"""

from ._client import (
    AskBridgeError,
    AsyncClient,
    BatchWaitTimeout,
    Client,
    WaitTimeout,
    approval_body,
    approval_call,
    approval_outcome,
    validate_ask,
)
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
    Item,
    Option,
    Question,
    QuestionPage,
    RespondBody,
    Run,
    Status,
)
from ._webhook import WebhookError, asgi_receiver, verify_webhook

__all__ = [
    "ActionRequest",
    "Answered",
    "ApprovalOutcome",
    "AskBody",
    "AskBridgeError",
    "AsyncClient",
    "Batch",
    "BatchAsked",
    "BatchBody",
    "BatchCall",
    "BatchOutcome",
    "BatchRespondBody",
    "BatchWaitTimeout",
    "CancelReason",
    "Client",
    "Item",
    "Option",
    "Question",
    "QuestionPage",
    "RespondBody",
    "Run",
    "Status",
    "WaitTimeout",
    "WebhookError",
    "approval_body",
    "approval_call",
    "approval_outcome",
    "asgi_receiver",
    "validate_ask",
    "verify_webhook",
]
