import pytest
from threadpoolctl import threadpool_limits


@pytest.fixture(autouse=True, scope="session")
def _single_threaded_blas():
    # The tests run many small BLAS calls, for which threads only add
    # contention on shared CI machines; results do not depend on it.
    with threadpool_limits(limits=1, user_api="blas"):
        yield
