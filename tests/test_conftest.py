"""The test suite's own helpers (conftest.py).

The network guard lets nothing through but loopback, and that only to tests
marked ``loopback``; optional dependencies skip their tests, unless the
environment requires them.
"""

import socket

import pytest
from conftest import NETWORK_BLOCKED, NetworkBlocked, import_or_skip, is_loopback

# Documentation addresses (RFC 5737, RFC 3849): never routed, and never
# reached here, since the guard refuses them before any packet is sent.
OUTSIDE = [("192.0.2.1", 80), ("2001:db8::1", 80)]


@pytest.fixture
def listener():
    """A server socket on the loopback interface, and its address."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield server.getsockname()


@pytest.mark.parametrize(
    "host, expected",
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("localhost", True),
        (b"127.0.0.1", True),
        ("192.0.2.1", False),
        ("2001:db8::1", False),
        ("example.org", False),
        ("/tmp/unix.sock", False),
        (None, False),
    ],
)
def test_is_loopback(host, expected):
    assert is_loopback(host) is expected


def test_loopback_is_refused_without_the_marker(listener):
    with pytest.raises(NetworkBlocked, match=NETWORK_BLOCKED):
        socket.create_connection(listener, timeout=5)
    with socket.socket() as sock, pytest.raises(NetworkBlocked):
        sock.connect(listener)
    with pytest.raises(NetworkBlocked):
        socket.getaddrinfo("localhost", listener[1])


@pytest.mark.loopback
def test_marker_lets_loopback_through(listener):
    with socket.create_connection(listener, timeout=5):
        pass
    with socket.socket() as sock:
        sock.settimeout(5)
        sock.connect(listener)
    with socket.socket() as sock:
        sock.settimeout(5)
        assert sock.connect_ex(listener) == 0
    assert socket.getaddrinfo("localhost", listener[1])
    assert socket.getaddrinfo(host="127.0.0.1", port=listener[1])


@pytest.mark.loopback
@pytest.mark.parametrize("address", OUTSIDE)
def test_marker_still_refuses_other_hosts(address):
    with pytest.raises(NetworkBlocked, match=NETWORK_BLOCKED):
        socket.create_connection(address, 5)
    with pytest.raises(NetworkBlocked):
        socket.create_connection(address=address, timeout=5)
    family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
    with socket.socket(family) as sock:
        with pytest.raises(NetworkBlocked):
            sock.connect(address)
        with pytest.raises(NetworkBlocked):
            sock.connect_ex(address)
    with pytest.raises(NetworkBlocked):
        socket.getaddrinfo("example.org", 443)
    with pytest.raises(NetworkBlocked):
        socket.getaddrinfo(address[0], address[1])


MISSING = "sklearn_budget_no_such_module"


def test_missing_optional_dependency_skips(monkeypatch):
    monkeypatch.delenv("SKLEARN_BUDGET_REQUIRE_TEST", raising=False)
    with pytest.raises(pytest.skip.Exception, match=MISSING):
        import_or_skip(MISSING, "SKLEARN_BUDGET_REQUIRE_TEST")
    monkeypatch.setenv("SKLEARN_BUDGET_REQUIRE_TEST", "0")
    with pytest.raises(pytest.skip.Exception):
        import_or_skip(MISSING, "SKLEARN_BUDGET_REQUIRE_TEST")


def test_required_dependency_fails_when_missing(monkeypatch):
    monkeypatch.setenv("SKLEARN_BUDGET_REQUIRE_TEST", "1")
    with pytest.raises(ImportError, match="SKLEARN_BUDGET_REQUIRE_TEST=1 but " + MISSING):
        import_or_skip(MISSING, "SKLEARN_BUDGET_REQUIRE_TEST")
    # A dependency that is there is returned either way.
    assert import_or_skip("json", "SKLEARN_BUDGET_REQUIRE_TEST").__name__ == "json"
