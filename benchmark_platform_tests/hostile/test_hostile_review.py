"""The review app attacked over HTTP (issue 40, 12): a NUL byte is a 400, not a 500; X-Forwarded-For is believed only
from a configured proxy, so rotating it does not get past the per-address login throttle. Served by uvicorn on
loopback the way `review serve` serves it."""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
import uvicorn

from benchmark_platform.review.config import ReviewConfig
from benchmark_platform.review.web import ReviewSite, create_app, server_config
from benchmark_platform_tests.review.conftest import PASSWORD, make_world  # noqa: F401 (fixture)

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def serve(make_world) -> Iterator:  # noqa: F811
    """serve(**review settings) -> (base URL, world): the app of a fresh review world on a loopback port."""
    servers: list[tuple[uvicorn.Server, threading.Thread]] = []

    def start(**review: object):
        world = make_world(n_items=2, n_reviewers=2)
        config = ReviewConfig.model_validate(review)
        site = ReviewSite(spec=world.spec, seed=5, disciplines=(world.discipline,), config=config)
        port = free_port()
        server = uvicorn.Server(server_config(create_app(world.db, site), "127.0.0.1", port))
        server.config.log_level = "warning"
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:  # uvicorn binds in its own thread
            time.sleep(0.05)
        servers.append((server, thread))
        return f"http://127.0.0.1:{port}", world

    yield start
    for server, thread in servers:
        server.should_exit = True
        thread.join()


def login(client: httpx.Client, name: str, password: str, **headers: str) -> httpx.Response:
    token = CSRF.search(client.get("/login").text).group(1)
    return client.post("/login", data={"reviewer_id": name, "password": password, "csrf_token": token}, headers=headers)


def test_a_nul_byte_in_a_form_field_is_a_400(serve):
    base, world = serve()
    with httpx.Client(base_url=base) as client:
        response = login(client, world.reviewers[0] + "\x00", PASSWORD)
        assert response.status_code == 400 and "NUL" in response.text
        assert client.get("/review/x%00y").status_code == 400
        assert client.get("/login?next=%00").status_code == 400
        assert login(client, world.reviewers[0], PASSWORD).status_code == 303  # the app still works


THROTTLE = {"login_throttle": {"free_failures_per_address": 2, "free_failures_per_account": 100}}


def test_rotating_x_forwarded_for_does_not_escape_the_address_throttle(serve):
    base, _ = serve(**THROTTLE)
    statuses = []
    with httpx.Client(base_url=base) as client:
        for n in range(5):  # a new name and a new claimed address on every try
            response = login(client, f"guess-{n}", "wrong password!!", **{"X-Forwarded-For": f"203.0.113.{n}"})
            statuses.append(response.status_code)
    assert statuses[:2] == [401, 401] and 429 in statuses[2:]


def test_x_forwarded_for_is_believed_from_a_configured_proxy(serve):
    base, _ = serve(**THROTTLE, trusted_proxies=["127.0.0.0/8"])
    statuses = []
    with httpx.Client(base_url=base) as client:
        for n in range(5):  # behind a trusted proxy, these are five clients
            response = login(client, f"guess-{n}", "wrong password!!", **{"X-Forwarded-For": f"203.0.113.{n}"})
            statuses.append(response.status_code)
    assert statuses == [401] * 5
