"""Run by clients/restart_test.go (pytest does not collect it): asks, prints
the question id, waits while the test restarts the bridge, and prints the
final record's status and response. The argument picks the client: sync or
async."""

import asyncio
import json
import sys

from askbridge import AsyncClient, Client

BODY = {"question": "Still there after the restart?", "options": [{"label": "Yes"}, {"label": "No"}], "timeout": "10m"}


def sync() -> dict:
    with Client() as c:
        q = c.ask({**BODY, "run_id": "restart-py"})
        print(q["id"], flush=True)
        return c.wait(q["id"], poll=60)


async def asynchronous() -> dict:
    async with AsyncClient() as c:
        q = await c.ask({**BODY, "run_id": "restart-py-async"})
        print(q["id"], flush=True)
        return await c.wait(q["id"], poll=60)


done = sync() if sys.argv[1] == "sync" else asyncio.run(asynchronous())
print(json.dumps({"status": done["status"], "response": done["response"]}), flush=True)
