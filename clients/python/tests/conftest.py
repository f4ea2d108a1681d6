import itertools
import os
import time

import pytest

from askbridge import Client

_n = itertools.count()
MARIA = {"platform": "slack", "id": "U0MARIA", "name": "maria"}


@pytest.fixture
def bridge():
    """A client on a project of its own (BRIDGE_URL and BRIDGE_PROJECT come from clients/clients_test.go)."""
    c = Client(url=os.environ["BRIDGE_URL"], project=f"{os.environ['BRIDGE_PROJECT']}-py-{os.getpid()}-{next(_n)}")
    yield c
    c.close()


def pending(bridge, count=1, timeout=20.0):
    until = time.monotonic() + timeout
    while True:
        qs = bridge.list(status="pending")
        if len(qs) >= count:
            return qs
        if time.monotonic() > until:
            raise AssertionError(f"expected {count} pending questions, have {len(qs)}")
        time.sleep(0.05)
