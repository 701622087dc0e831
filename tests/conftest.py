import os
import socket
from pathlib import Path

import pytest
from threadpoolctl import threadpool_limits

import sklearn_budget._base


@pytest.fixture(autouse=True, scope="session")
def _single_threaded_blas():
    # The tests run many small BLAS calls, for which threads only add
    # contention on shared CI machines; results do not depend on it.
    with threadpool_limits(limits=1, user_api="blas"):
        yield


NETWORK_BLOCKED = "the tests must not use the network"


class NetworkBlocked(OSError):
    """Raised by the test guard on any attempt to reach the network.

    An ``OSError``, as a real network failure is, so that code under test
    handles it as it would handle being offline.
    """


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    # No test may download: the real data come from a local data home.
    def refuse(*args, **kwargs):
        raise NetworkBlocked(NETWORK_BLOCKED)

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)


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
