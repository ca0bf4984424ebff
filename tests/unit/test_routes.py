"""The route reading of the dream pass's change rule: a request path a later session sent elsewhere."""

from __future__ import annotations

import time

import pytest
from cairn.pipeline.remembering.routes import rerouted, routes
from cairn.pipeline.remembering.subjects import changed, restates

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # a reverse proxy's location moved to another port
        ("`/graphql` is proxied to port 4000", "`/graphql` is proxied to port 4100"),
        # all requests under a path now go elsewhere: a narrower route sent elsewhere before is over
        (
            "Route order calls to `/api/orders/*` → port 4000 (orders service); everything else to `/` → "
            "port 8080",
            "All `/api/` requests go to the Phoenix endpoint",
        ),
        (
            "`/api/users` requests are forwarded to the Spring Boot app",
            "Route all `/api/` traffic to the Axum server",
        ),
        ("`/assistant/` → localhost:3335", "`/assistant/` → localhost:3334"),
    ],
)
def test_a_path_a_later_statement_sends_elsewhere_is_a_change(old, new):
    assert rerouted(old, new)
    assert changed(old, new)
    assert not restates(old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # said of `/api/` itself, not of all beneath it: a narrower location still wins in a proxy
        ("`/api/orders/*` → port 4000 (orders service)", "`/api/` requests go to the gateway"),
        ("`/static/` is served by nginx", "All `/api/` requests go to the Phoenix app"),
        # the same destination, named with and without its port
        ("`/api/` → the Phoenix endpoint on port 4000", "All `/api/` requests go to the Phoenix endpoint"),
        ("`/api/` → port 4000", "All `/api/` requests go to port 4000, not the old gateway"),
        # the wider route, then a narrower exception: the wider one still holds for the rest
        ("All `/api/` requests go to the map server", "`/api/mcp/*` → port 3333 (MCP server)"),
    ],
)
def test_another_path_or_the_same_destination_is_no_reroute(old, new):
    assert not rerouted(old, new)


@pytest.mark.parametrize(
    "text",
    [
        "It's not proxying `/api/` requests to the MCP server",  # denied
        "I added a route at `/logo.png` to serve it with caching headers",  # the noun, a purpose
        "- `location /api/` → **MISSING**",  # no destination
        "Copied `/etc/app.conf` from the old host",  # a file, sent nowhere
        "The proxy passes http://localhost:3333/api/ through",  # a path inside a URL is the URL's
    ],
)
def test_a_denied_missing_or_purposeful_route_states_no_route(text):
    assert routes(text) == ()


def test_a_route_statement_gives_its_path_whether_it_speaks_for_all_beneath_it_and_its_destination():
    got = routes(
        "Route API calls to `/api/mcp/*` → port 3333 (MCP server); "
        "All `/api/` requests go to the map server's own API"
    )
    assert [(r.path, r.every, r.port, set(r.words)) for r in got] == [
        ("/api/mcp/*", False, "3333", {"mcp"}),
        ("/api/", True, None, {"map"}),
    ]


def test_a_long_word_after_a_slash_is_read_in_linear_time():
    # a nested quantifier over a path's segments once took minutes on such a line
    started = time.perf_counter()
    assert routes("/" + "a." * 2000 + "! and nothing is sent anywhere") == ()
    assert time.perf_counter() - started < 1.0
