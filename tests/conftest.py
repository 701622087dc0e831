import importlib
import ipaddress
import os
import socket
import zlib
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import sklearn_budget._base


@pytest.fixture(autouse=True, scope="session")
def _single_threaded_blas():
    # The tests run many small BLAS calls, for which threads only add
    # contention on shared CI machines; results do not depend on it.
    with threadpool_limits(limits=1, user_api="blas"):
        yield


@pytest.fixture(autouse=True)
def _seeded_global_random_state(request):
    # random_state=None (every estimator's default) draws from numpy's
    # global generator, whose state would otherwise depend on the tests
    # that ran before in the same worker: the order pytest-xdist picks.
    # Seeded from the test's name, a test sees the same draws in any run.
    np.random.seed(zlib.crc32(request.node.nodeid.encode()))
    yield


NETWORK_BLOCKED = "the tests must not use the network"


class NetworkBlocked(OSError):
    """Raised by the test guard on any attempt to reach the network.

    An ``OSError``, as a real network failure is, so that code under test
    handles it as it would handle being offline.
    """


def is_loopback(host):
    """Whether ``host`` (a name or an address) stays on this machine."""
    if isinstance(host, bytes):
        host = host.decode()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except (TypeError, ValueError):
        return False


@pytest.fixture(autouse=True)
def no_network(request, monkeypatch):
    # No test may download: the real data come from a local data home.
    # Tests marked ``loopback`` (a local dask cluster) may reach this
    # machine's loopback addresses, and nothing else.
    loopback = request.node.get_closest_marker("loopback") is not None

    def guard(original, position, keyword):
        # ``position``/``keyword``: where the call takes the host, or the
        # (host, port) address, among its arguments.
        def call(*args, **kwargs):
            target = args[position] if len(args) > position else kwargs.get(keyword)
            host = target[0] if isinstance(target, tuple) else target
            if loopback and is_loopback(host):
                return original(*args, **kwargs)
            raise NetworkBlocked(NETWORK_BLOCKED)

        return call

    monkeypatch.setattr(socket, "getaddrinfo", guard(socket.getaddrinfo, 0, "host"))
    monkeypatch.setattr(socket, "create_connection", guard(socket.create_connection, 0, "address"))
    monkeypatch.setattr(socket.socket, "connect", guard(socket.socket.connect, 1, "address"))
    monkeypatch.setattr(socket.socket, "connect_ex", guard(socket.socket.connect_ex, 1, "address"))


def import_or_skip(name, require_env):
    """Import an optional dependency, or skip the module that needs it.

    With ``require_env`` set to 1 in the environment (the CI leg that
    installs it), a missing dependency fails instead of skipping.
    """
    if os.environ.get(require_env, "0") in ("", "0"):
        return pytest.importorskip(name)
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ImportError(
            f"{require_env}=1 but {name} cannot be imported ({exc}): install the "
            "optional dependencies of these tests, or unset the variable to skip them."
        ) from exc


@pytest.fixture(scope="session")
def data_home():
    """The local copy of the real data: $SKLEARN_BUDGET_DATA or ../shared/data."""
    env = os.environ.get("SKLEARN_BUDGET_DATA")
    home = Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "data"
    if not home.is_dir():
        pytest.fail(
            f"The local data home {home} does not exist: these tests read the real data "
            "from it. Set SKLEARN_BUDGET_DATA to a folder laid out as <data_home>/a9a/a9a, "
            "<data_home>/usps/zip.train.gz, ... (the shared data folder)."
        )
    return str(home)


def pytest_generate_tests(metafunc):
    # Tests of what the stream does (memory, budget bounds, long runs) run
    # once, on the path the cost model picks; the others on both paths.
    if "kernel_path" in metafunc.fixturenames:
        once = metafunc.definition.get_closest_marker("any_kernel_path") is not None
        paths = ["auto"] if once else ["direct", "blocked"]
        metafunc.parametrize("kernel_path", paths, indirect=True)


@pytest.fixture
def kernel_path(request, monkeypatch):
    """Play the test on each source of kernel values of the engine.

    ``direct``: the compiled loop computes kernel rows itself (dense input,
    built-in kernels; other inputs fall back to blocked); ``blocked``: kernel
    blocks from ``pairwise_kernels``; ``auto``: the cost model chooses.
    """
    path = None if request.param == "auto" else request.param
    monkeypatch.setattr(sklearn_budget._base, "_FORCE_PATH", path)
    return request.param
