"""Tests of sklearn_budget.datasets, on the local copy of the real data.

No test may reach the network: the real data comes from a local data home,
the download tests use ``file://`` copies of it, and an autouse fixture of
conftest.py makes any attempt to open a network connection fail.
"""

import gzip
import hashlib
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import NETWORK_BLOCKED
from scipy.io import loadmat, savemat
from sklearn.utils import Bunch
from sklearn.utils._param_validation import InvalidParameterError

import sklearn_budget.datasets
from sklearn_budget.datasets import (
    DataFileError,
    _base,
    _remote,
    fetch_a9a,
    fetch_banana,
    fetch_dna,
    fetch_mnist,
    fetch_pendigits,
    fetch_satimage,
    fetch_usps,
    fetch_waveform,
    get_data_home,
    make_two_gaussians,
)
from sklearn_budget.datasets._base import RemoteFileMetadata

# Published sizes and label counts of the data sets (the data's README,
# USPS's zip.info.txt), stated here independently of the code under test.
A9A_TRAIN, A9A_TEST, A9A_FEATURES = 32561, 16281, 123
USPS_TRAIN, USPS_TEST = 7291, 2007
USPS_TRAIN_COUNTS = [1194, 1005, 731, 658, 652, 556, 664, 645, 542, 644]
USPS_TEST_COUNTS = [359, 264, 198, 166, 200, 160, 170, 147, 166, 177]
FILES = {
    "a9a/a9a": "f5d5ffd8d865ff41328e7ee043e4b020816914ff6843ff15b98905ddbedce906",
    "a9a/a9a.t": "7d8c09f1120d9ff231d85caba98956906033f3c4d53e2b15ab7ef83710de6a76",
    "usps/zip.train.gz": "66ebf231ab51f2cf6ac1a892d0f98ccffee1079d7a5db638c1f11f366046ca16",
    "usps/zip.test.gz": "8dacc3c6e136af6c3488de9e5113a7daf140c8c2f1f0b61c54ee02f03f1a962f",
    "banana/banana.csv": "390a30b5037c8eb6355a34478311d8d0da776c0260f03055a771441535808959",
    "waveform/waveform.mat": "f783135eb00109cb241f65481be36c011cc1fc13df6180d512d2a2a3488e9db3",
    "mnist/t10k-images-idx3-ubyte.gz": (
        "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6"
    ),
    "mnist/t10k-labels-idx1-ubyte.gz": (
        "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6"
    ),
    "dna/dna.scale": "03d39477c5e48415e9cd18e006efc8f7a3b5c3deaee8289a72511c35070e3cfe",
    "dna/dna.scale.t": "d2eeed170e4e38ae2aba6aa4cd27a8ca4ecceb01a7751e8e509bb4e1a6bcef39",
    "satimage/satimage.scale": "df08755887b968a272b84247fa0b1543b8cd623442fbc1c7943144e459ef2eb6",
    "satimage/satimage.scale.t": (
        "b04c60323488f5a7f571d40be5d750b279e8f3bd43729b4c109b8c013fcd8196"
    ),
    "pendigits/pendigits": "6e8a2f318a24d97d26a9c381642621dc955fed73ec44c4d417bd7afbb47ed67c",
    "pendigits/pendigits.t": "5ddb2f034e1c5ca8a47b8a7e78510f8a9d68015cf40a5031534c693fba9773d3",
}
IMAGES, LABELS = "mnist/t10k-images-idx3-ubyte.gz", "mnist/t10k-labels-idx1-ubyte.gz"
# The test set of MNIST (its README): digits 0-9.
MNIST_COUNTS = [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
# The multiclass sets of the BSGD paper's Table 3 (LIBSVM's site, the data's
# README): rows (train, test), features, and the training rows per label.
MULTICLASS = {
    "dna": (fetch_dna, (2000, 1186), 180, {1: 464, 2: 485, 3: 1051}),
    "satimage": (fetch_satimage, (4435, 2000), 36,
                 {1: 1072, 2: 479, 3: 961, 4: 415, 5: 470, 6: 1038}),
    "pendigits": (fetch_pendigits, (7494, 3498), 16,
                  dict(enumerate([780, 779, 780, 719, 780, 720, 720, 778, 719, 719]))),
}  # fmt: skip


def _files_under(folder):
    return sorted(p.relative_to(folder).as_posix() for p in Path(folder).rglob("*") if p.is_file())


# ---------------------------------------------------------------------------
# make_two_gaussians


def _old_make_synthetic(n_samples, random_state=None):
    # Verbatim copy of the former sklearn_budget._datasets.make_synthetic:
    # the published benchmark numbers were computed on its draws.
    from sklearn.utils import check_random_state

    rng = check_random_state(random_state)
    y = np.where(rng.rand(n_samples) < 0.5, 1, -1)
    X = rng.randn(n_samples, 2) * np.sqrt([0.2, 2.0]) + y[:, None]
    return X, np.where(rng.rand(n_samples) < 0.1, -y, y)


@pytest.mark.parametrize("seed", [0, 1, 42])
@pytest.mark.parametrize("n_samples", [1, 7, 10000])
def test_make_two_gaussians_pins_the_former_generator(seed, n_samples):
    X_old, y_old = _old_make_synthetic(n_samples, random_state=seed)
    X, y = make_two_gaussians(n_samples, random_state=seed)
    np.testing.assert_array_equal(X, X_old)
    np.testing.assert_array_equal(y, y_old)
    X, y = make_two_gaussians(n_samples, noise=0.1, random_state=seed)
    np.testing.assert_array_equal(X, X_old)
    np.testing.assert_array_equal(y, y_old)


def test_make_two_gaussians_default_size_and_continued_stream():
    X_old, y_old = _old_make_synthetic(10000, random_state=3)
    X, y = make_two_gaussians(random_state=3)
    np.testing.assert_array_equal(X, X_old)
    np.testing.assert_array_equal(y, y_old)

    # A RandomState continues its stream: a training then a test set.
    rng_old, rng = np.random.RandomState(5), np.random.RandomState(5)
    for n in (300, 200):
        X_old, y_old = _old_make_synthetic(n, rng_old)
        X, y = make_two_gaussians(n, random_state=rng)
        np.testing.assert_array_equal(X, X_old)
        np.testing.assert_array_equal(y, y_old)
    X_a, _ = make_two_gaussians(50, random_state=rng)
    X_b, _ = make_two_gaussians(50, random_state=rng)
    assert not np.array_equal(X_a, X_b)


def test_make_two_gaussians_shapes_and_reproducibility():
    X, y = make_two_gaussians(123, random_state=0)
    assert X.shape == (123, 2) and y.shape == (123,)
    assert X.dtype == np.float64
    assert np.issubdtype(y.dtype, np.integer)
    assert set(np.unique(y)) == {-1, 1}
    X2, y2 = make_two_gaussians(123, random_state=0)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    X3, _ = make_two_gaussians(123, random_state=1)
    assert not np.array_equal(X, X3)


def test_make_two_gaussians_distribution():
    n = 20000
    X, y_clean = make_two_gaussians(n, noise=0.0, random_state=0)
    X_noisy, y = make_two_gaussians(n, noise=0.1, random_state=0)
    # The noise only flips labels: the points, and the Gaussian each one
    # comes from (its label without noise), are the same.
    np.testing.assert_array_equal(X, X_noisy)
    flipped = y != y_clean
    np.testing.assert_array_equal(y[flipped], -y_clean[flipped])
    sigma = np.sqrt(0.1 * 0.9 / n)
    assert abs(flipped.mean() - 0.1) < 4 * sigma

    assert abs((y_clean == 1).mean() - 0.5) < 4 * np.sqrt(0.25 / n)
    for label, mean in [(1, [1.0, 1.0]), (-1, [-1.0, -1.0])]:
        Xc = X[y_clean == label]
        np.testing.assert_allclose(Xc.mean(axis=0), mean, atol=0.06)
        np.testing.assert_allclose(Xc.var(axis=0), [0.2, 2.0], rtol=0.06)
        assert abs(np.corrcoef(Xc.T)[0, 1]) < 0.05

    # Without noise, the classes are the Gaussians: the Bayes rule (sign of
    # x1 / 0.2 + x2 / 2) errs with probability Phi(-sqrt(22) / 2) = 0.95%,
    # and with the flips with probability 0.1 * 0.9905 + 0.9 * 0.0095 = 10.8%.
    bayes = np.where(X[:, 0] / 0.2 + X[:, 1] / 2.0 > 0, 1, -1)
    assert abs((bayes != y_clean).mean() - 0.0095) < 4 * np.sqrt(0.0095 * 0.9905 / n)
    assert abs((bayes != y).mean() - 0.108) < 4 * np.sqrt(0.108 * 0.892 / n)


def test_make_two_gaussians_all_labels_flipped():
    X, y_clean = make_two_gaussians(500, noise=0.0, random_state=0)
    _, y = make_two_gaussians(500, noise=1.0, random_state=0)
    np.testing.assert_array_equal(y, -y_clean)


@pytest.mark.parametrize(
    "kwargs", [{"n_samples": 0}, {"noise": -0.1}, {"noise": 1.5}, {"random_state": "a"}]
)
def test_make_two_gaussians_rejects_bad_parameters(kwargs):
    with pytest.raises(InvalidParameterError):
        make_two_gaussians(**kwargs)


# ---------------------------------------------------------------------------
# get_data_home


def test_get_data_home_argument_wins(monkeypatch, tmp_path):
    monkeypatch.setenv("SKLEARN_BUDGET_DATA", str(tmp_path / "from_env"))
    assert get_data_home(str(tmp_path / "arg")) == str(tmp_path / "arg")
    assert get_data_home(tmp_path / "arg") == str(tmp_path / "arg")
    assert not (tmp_path / "arg").exists()  # not created


def test_get_data_home_environment_variable(monkeypatch, tmp_path):
    monkeypatch.setenv("SKLEARN_BUDGET_DATA", str(tmp_path / "from_env"))
    assert get_data_home() == str(tmp_path / "from_env")
    assert not (tmp_path / "from_env").exists()


def test_get_data_home_default_and_tilde(monkeypatch, tmp_path):
    monkeypatch.delenv("SKLEARN_BUDGET_DATA", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("USERPROFILE", str(tmp_path))  # expanduser on Windows
    assert get_data_home() == os.path.join(str(tmp_path), "scikit_learn_data")
    assert not (tmp_path / "scikit_learn_data").exists()
    assert get_data_home(os.path.join("~", "data")) == os.path.join(str(tmp_path), "data")
    monkeypatch.setenv("SKLEARN_BUDGET_DATA", os.path.join("~", "env_data"))
    assert get_data_home() == os.path.join(str(tmp_path), "env_data")


def test_fetchers_use_the_environment_variable(monkeypatch, data_home):
    monkeypatch.setenv("SKLEARN_BUDGET_DATA", data_home)
    X, y = fetch_banana(download_if_missing=False, return_X_y=True)
    assert X.shape == (5300, 2)


# ---------------------------------------------------------------------------
# fetch_a9a


@pytest.mark.parametrize(
    "subset, n_rows, n_pos", [("train", A9A_TRAIN, 7841), ("test", A9A_TEST, 3846)]
)
def test_fetch_a9a(data_home, subset, n_rows, n_pos):
    bunch = fetch_a9a(data_home=data_home, subset=subset, download_if_missing=False)
    assert isinstance(bunch, Bunch)
    X, y = bunch.data, bunch.target
    assert sp.issparse(X) and X.format == "csr"
    assert X.shape == (n_rows, A9A_FEATURES)
    assert X.dtype == np.float64
    # Binary features (a9a.t stores one explicit "123:0" to declare the width).
    assert np.isin(X.data, [0.0, 1.0]).all() and (X.data == 1.0).any()
    assert y.shape == (n_rows,) and y.dtype == np.int64
    assert set(np.unique(y)) == {-1, 1}
    assert (y == 1).sum() == n_pos
    assert "32561" in bunch.DESCR


def test_fetch_a9a_first_row_and_all(data_home):
    X, y = fetch_a9a(data_home=data_home, return_X_y=True)
    # The first line of a9a is "-1 3:1 11:1 14:1 19:1 39:1 42:1 55:1 64:1 67:1
    # 73:1 75:1 76:1 80:1 83:1" (one-based indices).
    expected = np.array([3, 11, 14, 19, 39, 42, 55, 64, 67, 73, 75, 76, 80, 83]) - 1
    np.testing.assert_array_equal(np.sort(X[0].indices), expected)
    assert y[0] == -1

    X_test, y_test = fetch_a9a(data_home=data_home, subset="test", return_X_y=True)
    X_all, y_all = fetch_a9a(data_home=data_home, subset="all", return_X_y=True)
    assert sp.issparse(X_all) and X_all.format == "csr"
    assert X_all.shape == (A9A_TRAIN + A9A_TEST, A9A_FEATURES)
    assert (X_all[:A9A_TRAIN] != X).nnz == 0
    assert (X_all[A9A_TRAIN:] != X_test).nnz == 0
    np.testing.assert_array_equal(y_all, np.concatenate([y, y_test]))


# ---------------------------------------------------------------------------
# fetch_usps


def test_fetch_usps_binary(data_home):
    bunch = fetch_usps(data_home=data_home, download_if_missing=False)
    X, y = bunch.data, bunch.target
    assert isinstance(X, np.ndarray) and not sp.issparse(X)
    assert X.shape == (USPS_TRAIN, 256) and X.dtype == np.float64
    assert X.min() == -1.0 and X.max() == 1.0
    assert y.dtype == np.int64 and set(np.unique(y)) == {-1, 1}
    assert (y == 1).sum() == 1194
    np.testing.assert_array_equal(np.bincount(bunch.digits), USPS_TRAIN_COUNTS)
    np.testing.assert_array_equal(y == 1, bunch.digits == 0)
    assert bunch.noisy.dtype == bool and not bunch.noisy.any()
    assert "7291" in bunch.DESCR and "2007" in bunch.DESCR


def test_fetch_usps_positive_digit_and_subsets(data_home):
    X, y = fetch_usps(data_home=data_home, subset="test", positive_digit=7, return_X_y=True)
    assert X.shape == (USPS_TEST, 256)
    assert (y == 1).sum() == USPS_TEST_COUNTS[7]
    assert (y == -1).sum() == USPS_TEST - USPS_TEST_COUNTS[7]

    train = fetch_usps(data_home=data_home, positive_digit=None)
    test = fetch_usps(data_home=data_home, subset="test", positive_digit=None)
    every = fetch_usps(data_home=data_home, subset="all", positive_digit=None)
    assert every.data.shape == (USPS_TRAIN + USPS_TEST, 256)
    np.testing.assert_array_equal(every.data, np.vstack([train.data, test.data]))
    np.testing.assert_array_equal(
        np.bincount(every.target), np.add(USPS_TRAIN_COUNTS, USPS_TEST_COUNTS)
    )


def test_fetch_usps_multiclass(data_home):
    bunch = fetch_usps(data_home=data_home, positive_digit=None)
    assert bunch.target.dtype == np.int64
    np.testing.assert_array_equal(np.unique(bunch.target), np.arange(10))
    np.testing.assert_array_equal(np.bincount(bunch.target), USPS_TRAIN_COUNTS)
    np.testing.assert_array_equal(bunch.target, bunch.digits)


def test_fetch_usps_label_noise(data_home):
    clean = fetch_usps(data_home=data_home)
    noisy = fetch_usps(data_home=data_home, label_noise=0.1, random_state=0)
    n_flips = 729  # round(0.1 * 7291)
    np.testing.assert_array_equal(noisy.data, clean.data)
    np.testing.assert_array_equal(noisy.digits, clean.digits)
    changed = noisy.target != clean.target
    assert changed.sum() == n_flips
    np.testing.assert_array_equal(changed, noisy.noisy)
    np.testing.assert_array_equal(noisy.target[changed], -clean.target[changed])
    # Reproducible with random_state, and a different seed flips other rows.
    again = fetch_usps(data_home=data_home, label_noise=0.1, random_state=0)
    np.testing.assert_array_equal(again.target, noisy.target)
    other = fetch_usps(data_home=data_home, label_noise=0.1, random_state=1)
    assert other.noisy.sum() == n_flips
    assert not np.array_equal(other.noisy, noisy.noisy)
    # The flipped rows are drawn uniformly: about 10% of each class.
    zeros = clean.digits == 0
    assert 0.06 < noisy.noisy[zeros].mean() < 0.14
    # On the test subset: round(0.1 * 2007) = 201 flips.
    _, y_test = fetch_usps(data_home=data_home, subset="test", return_X_y=True)
    _, y_test_noisy = fetch_usps(
        data_home=data_home, subset="test", label_noise=0.1, random_state=0, return_X_y=True
    )
    assert (y_test != y_test_noisy).sum() == 201


def test_fetch_usps_label_noise_needs_binary_labels(data_home):
    with pytest.raises(ValueError, match="positive_digit"):
        fetch_usps(data_home=data_home, positive_digit=None, label_noise=0.1)
    # No noise is fine in the multiclass case.
    fetch_usps(data_home=data_home, positive_digit=None, label_noise=0.0)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"label_noise": 1.0},
        {"label_noise": -0.1},
        {"positive_digit": 10},
        {"positive_digit": -1},
        {"subset": "validation"},
    ],
)
def test_fetch_usps_rejects_bad_parameters(data_home, kwargs):
    with pytest.raises(InvalidParameterError):
        fetch_usps(data_home=data_home, **kwargs)


# ---------------------------------------------------------------------------
# fetch_banana, fetch_waveform


def test_fetch_banana(data_home):
    bunch = fetch_banana(data_home=data_home, download_if_missing=False)
    X, y = bunch.data, bunch.target
    assert isinstance(X, np.ndarray) and X.shape == (5300, 2) and X.dtype == np.float64
    assert y.shape == (5300,) and y.dtype == np.int64
    assert set(np.unique(y)) == {-1, 1}
    assert (y == 1).sum() == 2376 and (y == -1).sum() == 2924
    # First data row of banana.csv: "0.81189519,-0.19526175,1".
    np.testing.assert_array_equal(X[0], [0.81189519, -0.19526175])
    assert y[0] == 1
    assert "4000" in bunch.DESCR and "1300" in bunch.DESCR
    X2, y2 = fetch_banana(data_home=data_home, return_X_y=True)
    np.testing.assert_array_equal(X2, X)
    np.testing.assert_array_equal(y2, y)


def test_fetch_waveform(data_home):
    bunch = fetch_waveform(data_home=data_home, download_if_missing=False)
    X, y = bunch.data, bunch.target
    assert isinstance(X, np.ndarray) and X.shape == (5000, 21) and X.dtype == np.float64
    assert y.shape == (5000,) and y.dtype == np.int64
    assert set(np.unique(y)) == {-1, 1}
    assert (y == 1).sum() == 1647
    # Standardized features.
    np.testing.assert_allclose(X.mean(axis=0), 0, atol=1e-6)
    np.testing.assert_allclose(X.std(axis=0), 1, atol=1e-3)
    assert "4000" in bunch.DESCR and "1000" in bunch.DESCR
    X2, y2 = fetch_waveform(data_home=data_home, return_X_y=True)
    np.testing.assert_array_equal(X2, X)
    np.testing.assert_array_equal(y2, y)


def test_fetch_mnist(data_home):
    bunch = fetch_mnist(data_home=data_home, download_if_missing=False)
    X, y = bunch.data, bunch.target
    assert isinstance(X, np.ndarray) and X.shape == (10000, 784) and X.dtype == np.float64
    assert y.shape == (10000,) and y.dtype == np.int64
    assert np.bincount(y).tolist() == MNIST_COUNTS
    assert y[:5].tolist() == [7, 2, 1, 0, 4]  # the first test digits
    assert X.min() == 0 and X.max() == 255 and np.array_equal(X, np.round(X))
    # The first image, a 7: ink in the middle rows, none in the corners.
    image = X[0].reshape(28, 28)
    assert image[:4].sum() == 0 and image[8:20].sum() > 0
    assert "10000" in bunch.DESCR and "60000" in bunch.DESCR
    X2, y2 = fetch_mnist(data_home=data_home, return_X_y=True)
    np.testing.assert_array_equal(X2, X)
    np.testing.assert_array_equal(y2, y)


@pytest.mark.parametrize("name", sorted(MULTICLASS))
def test_fetch_multiclass(name, data_home):
    fetcher, (n_train, n_test), n_features, counts = MULTICLASS[name]
    bunch = fetcher(data_home=data_home, download_if_missing=False)
    X, y = bunch.data, bunch.target
    assert isinstance(X, np.ndarray) and X.shape == (n_train, n_features)
    assert X.dtype == np.float64 and y.dtype == np.int64
    assert dict(zip(*np.unique(y, return_counts=True))) == counts
    assert np.isfinite(X).all()
    if name == "pendigits":
        assert X.min() == 0 and X.max() == 100  # unscaled
    elif name == "dna":
        assert set(np.unique(X)) == {0.0, 1.0}
    else:
        assert X.min() == -1 and X.max() == 1  # scaled on the training rows
    assert bunch.DESCR.startswith(bunch.DESCR.split("\n")[0]) and str(n_train) in bunch.DESCR
    X_test, y_test = fetcher(data_home=data_home, subset="test", return_X_y=True)
    assert X_test.shape == (n_test, n_features) and set(np.unique(y_test)) <= set(counts)
    X_all, y_all = fetcher(data_home=data_home, subset="all", return_X_y=True)
    np.testing.assert_array_equal(X_all, np.vstack([X, X_test]))
    np.testing.assert_array_equal(y_all, np.concatenate([y, y_test]))


# ---------------------------------------------------------------------------
# Missing data and downloads


FETCHERS = {
    fetch_a9a: ["a9a/a9a"],
    fetch_usps: ["usps/zip.train.gz"],
    fetch_banana: ["banana/banana.csv"],
    fetch_waveform: ["waveform/waveform.mat"],
    fetch_mnist: ["mnist/t10k-images-idx3-ubyte.gz", "mnist/t10k-labels-idx1-ubyte.gz"],
    fetch_dna: ["dna/dna.scale"],
    fetch_satimage: ["satimage/satimage.scale"],
    fetch_pendigits: ["pendigits/pendigits"],
}


@pytest.mark.parametrize("fetcher", list(FETCHERS))
def test_missing_data_without_download(fetcher, tmp_path):
    with pytest.raises(OSError) as excinfo:
        fetcher(data_home=str(tmp_path), download_if_missing=False)
    message = str(excinfo.value)
    assert str(tmp_path) in message
    assert FETCHERS[fetcher][0] in message
    assert "data_home" in message and "SKLEARN_BUDGET_DATA" in message
    assert _files_under(tmp_path) == []


def test_remote_table_matches_the_local_checksums(data_home):
    # The table covers every file the fetchers read, with the checksums of
    # the shared data (stated independently above), and the layout of the
    # shared folder.
    table = {remote.filename: remote.checksum for remote in _remote.REMOTE_FILES}
    assert table == FILES
    for remote in _remote.REMOTE_FILES:
        assert remote.url.startswith("https://")
        assert (Path(data_home) / remote.filename).is_file()


@pytest.fixture
def file_urls(monkeypatch, tmp_path, data_home):
    """Serve copies of the shared files through file:// URLs."""
    source = tmp_path / "remote"
    table = []
    for remote in _remote.REMOTE_FILES:
        copy = source / remote.filename.replace("/", "_")
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(Path(data_home) / remote.filename, copy)
        table.append(remote._replace(url=copy.as_uri()))
    monkeypatch.setattr(_remote, "REMOTE_FILES", tuple(table))
    return table


@pytest.mark.parametrize("fetcher", list(FETCHERS))
def test_download_verifies_and_loads(fetcher, file_urls, tmp_path, data_home):
    home = tmp_path / "home"
    result = fetcher(data_home=str(home), return_X_y=True)
    expected = fetcher(data_home=data_home, download_if_missing=False, return_X_y=True)
    assert _files_under(home) == FETCHERS[fetcher]  # no temporary file left
    for filename in FETCHERS[fetcher]:
        assert (home / filename).read_bytes() == (Path(data_home) / filename).read_bytes()
    for got, want in zip(result, expected):
        if sp.issparse(want):
            assert (got != want).nnz == 0
        else:
            np.testing.assert_array_equal(got, want)

    # Once there, the files are read without download, even with the
    # sources gone.
    shutil.rmtree(tmp_path / "remote")
    again = fetcher(data_home=str(home), download_if_missing=False, return_X_y=True)
    assert again[0].shape == expected[0].shape


def test_download_of_two_files_and_environment_home(monkeypatch, file_urls, tmp_path):
    home = tmp_path / "env_home"
    monkeypatch.setenv("SKLEARN_BUDGET_DATA", str(home))
    X, y = fetch_a9a(subset="all", return_X_y=True)
    assert X.shape == (A9A_TRAIN + A9A_TEST, A9A_FEATURES)
    assert _files_under(home) == ["a9a/a9a", "a9a/a9a.t"]


def test_download_with_wrong_checksum_leaves_nothing(monkeypatch, file_urls, tmp_path):
    wrong = "0" * 64
    table = [
        r._replace(checksum=wrong) if r.filename == "banana/banana.csv" else r for r in file_urls
    ]
    monkeypatch.setattr(_remote, "REMOTE_FILES", tuple(table))
    home = tmp_path / "home"
    with pytest.raises(OSError) as excinfo:
        fetch_banana(data_home=str(home))
    message = str(excinfo.value)
    assert "banana.csv" in message
    assert wrong in message and FILES["banana/banana.csv"] in message
    assert not home.exists()  # not even the folders the download made
    # Nothing half-done was left to be mistaken for the data.
    with pytest.raises(OSError, match="not found"):
        fetch_banana(data_home=str(home), download_if_missing=False)


def test_failed_download_names_the_remedy_and_leaves_nothing(monkeypatch, tmp_path):
    missing = RemoteFileMetadata(
        "banana/banana.csv", (tmp_path / "nowhere.csv").as_uri(), FILES["banana/banana.csv"]
    )
    monkeypatch.setattr(_remote, "REMOTE_FILES", (missing,))
    home = tmp_path / "home"
    with pytest.raises(OSError) as excinfo:
        fetch_banana(data_home=str(home))
    message = str(excinfo.value)
    assert "nowhere.csv" in message and str(home) in message
    assert "SKLEARN_BUDGET_DATA" in message
    assert not home.exists()  # not even the folders the download made


def test_real_urls_are_not_reached_in_tests(tmp_path):
    # The suite's network guard (conftest.py) stops the download at its first call,
    # and the failed download leaves nothing behind.
    home = tmp_path / "home"
    with pytest.raises(OSError, match=NETWORK_BLOCKED):
        fetch_banana(data_home=str(home))
    assert not home.exists()  # not even the folders the download made


def test_modified_local_files_are_read_only_without_checksum(tmp_path):
    # A local variant of the data fails its checksum, and is read (not
    # replaced by a download) with verify_checksum=False.
    home = tmp_path / "home"
    (home / "banana").mkdir(parents=True)
    (home / "banana" / "banana.csv").write_text("X1,X2,Y\n0.5,-2,1\n1.5,3,-1\n")
    with pytest.raises(DataFileError, match="verify_checksum=False"):
        fetch_banana(data_home=str(home))
    X, y = fetch_banana(data_home=str(home), verify_checksum=False, return_X_y=True)
    np.testing.assert_array_equal(X, [[0.5, -2.0], [1.5, 3.0]])
    np.testing.assert_array_equal(y, [1, -1])
    assert _files_under(home) == ["banana/banana.csv"]


def test_failed_download_keeps_folders_that_existed(tmp_path):
    home = tmp_path / "home"
    (home / "banana").mkdir(parents=True)
    with pytest.raises(OSError, match=NETWORK_BLOCKED):
        fetch_banana(data_home=str(home))
    assert (home / "banana").is_dir() and _files_under(home) == []


# ---------------------------------------------------------------------------
# Checksums of local files


# The fetcher call that reads each file.
READERS = {
    "a9a/a9a": (fetch_a9a, {}),
    "a9a/a9a.t": (fetch_a9a, {"subset": "test"}),
    "usps/zip.train.gz": (fetch_usps, {}),
    "usps/zip.test.gz": (fetch_usps, {"subset": "test"}),
    "banana/banana.csv": (fetch_banana, {}),
    "waveform/waveform.mat": (fetch_waveform, {}),
    "mnist/t10k-images-idx3-ubyte.gz": (fetch_mnist, {}),
    "mnist/t10k-labels-idx1-ubyte.gz": (fetch_mnist, {}),
    "dna/dna.scale": (fetch_dna, {}),
    "dna/dna.scale.t": (fetch_dna, {"subset": "test"}),
    "satimage/satimage.scale": (fetch_satimage, {}),
    "satimage/satimage.scale.t": (fetch_satimage, {"subset": "test"}),
    "pendigits/pendigits": (fetch_pendigits, {}),
    "pendigits/pendigits.t": (fetch_pendigits, {"subset": "test"}),
}


def _home_with(tmp_path, filename, content):
    """A data home in ``tmp_path`` holding ``filename`` with ``content``."""
    home = tmp_path / "home"
    path = home / filename
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return str(home), path


def _flip(content, i):
    """``content`` with the bits of its byte ``i`` flipped."""
    return content[:i] + bytes([content[i] ^ 0xFF]) + content[i + 1 :]


def _load(filename, home, **kwargs):
    fetcher, kw = READERS[filename]
    return fetcher(data_home=home, download_if_missing=False, **kw, **kwargs)


def test_data_file_error_is_an_os_error():
    # As the error of a missing file: "except OSError" covers unusable data.
    assert issubclass(DataFileError, OSError)
    assert "DataFileError" in sklearn_budget.datasets.__all__


@pytest.mark.parametrize("filename", sorted(READERS))
def test_altered_local_file_fails_its_checksum(filename, tmp_path, data_home):
    content = (Path(data_home) / filename).read_bytes()
    content = _flip(content, len(content) // 2)  # same size
    home, path = _home_with(tmp_path, filename, content)
    # fetch_mnist reads two files: the other one is good.
    others = [f for f in (IMAGES, LABELS) if filename.startswith("mnist/") and f != filename]
    for other in others:
        shutil.copyfile(Path(data_home) / other, Path(home) / other)
    with pytest.raises(DataFileError) as excinfo:
        _load(filename, home)
    message = str(excinfo.value)
    assert str(path) in message
    assert FILES[filename] in message
    assert hashlib.sha256(content).hexdigest() in message
    assert "Delete it" in message and "verify_checksum=False" in message
    assert _files_under(home) == sorted([filename, *others])  # not replaced by a download


def test_truncated_a9a_is_caught_by_its_checksum(tmp_path, data_home):
    # Cut at a line boundary, the file still parses: only the checksum tells.
    lines = (Path(data_home) / "a9a/a9a").read_bytes().splitlines(keepends=True)
    home, path = _home_with(tmp_path, "a9a/a9a", b"".join(lines[:1000]))
    with pytest.raises(DataFileError, match="does not match the expected checksum"):
        fetch_a9a(data_home=home)
    X, y = fetch_a9a(data_home=home, verify_checksum=False, return_X_y=True)
    assert X.shape == (1000, A9A_FEATURES) and y.shape == (1000,)


def test_checksum_is_computed_once_per_file_version(monkeypatch, tmp_path, data_home):
    hashed = []
    sha256 = _base._sha256
    monkeypatch.setattr(_base, "_sha256", lambda path: hashed.append(path) or sha256(path))
    content = (Path(data_home) / "banana/banana.csv").read_bytes()
    home, path = _home_with(tmp_path, "banana/banana.csv", content)
    for _ in range(3):
        fetch_banana(data_home=home)
    assert hashed == [str(path)]
    fetch_banana(data_home=home, verify_checksum=False)
    assert len(hashed) == 1

    # Another version of the file (new times, then new content of the same
    # size) is hashed again.
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    fetch_banana(data_home=home)
    assert len(hashed) == 2
    path.write_bytes(content.replace(b"0.81189519", b"0.81189518", 1))
    with pytest.raises(DataFileError, match="does not match"):
        fetch_banana(data_home=home)
    # A mismatch is not cached: fixed, the file is hashed and accepted again.
    path.write_bytes(content)
    fetch_banana(data_home=home)
    assert len(hashed) == 4


def test_downloaded_files_are_not_hashed_again(monkeypatch, file_urls, tmp_path):
    home = tmp_path / "home"
    fetch_banana(data_home=str(home))  # verified while it streamed
    hashed = []
    monkeypatch.setattr(_base, "_sha256", lambda path: hashed.append(path))
    fetch_banana(data_home=str(home))
    assert hashed == []


def test_a_folder_in_place_of_a_data_file(tmp_path):
    home = tmp_path / "home"
    (home / "banana" / "banana.csv").mkdir(parents=True)
    for verify in (True, False):
        with pytest.raises(DataFileError, match="is not a regular file") as excinfo:
            fetch_banana(data_home=str(home), verify_checksum=verify)
        assert str(home / "banana" / "banana.csv") in str(excinfo.value)


@pytest.mark.parametrize("fetcher", list(FETCHERS))
@pytest.mark.parametrize("value", ["yes", 1, None])
def test_verify_checksum_is_validated(fetcher, value, data_home):
    with pytest.raises(InvalidParameterError, match="verify_checksum"):
        fetcher(data_home=data_home, verify_checksum=value)


# ---------------------------------------------------------------------------
# Malformed files: checked by the parsers, even with verify_checksum=False


def _assert_malformed(filename, home, path, match):
    with pytest.raises(DataFileError, match=match) as excinfo:
        _load(filename, home, verify_checksum=False)
    message = str(excinfo.value)
    assert message.startswith(f"Malformed data file {path}: ")
    assert "\n" not in message  # one line on the command line


def _a9a_lines(data_home, n=5):
    return (Path(data_home) / "a9a/a9a").read_bytes().splitlines(keepends=True)[:n]


@pytest.mark.parametrize(
    "line, match",
    [
        (b"abc 3:1 11:1\n", r"line 3: the label 'abc' is not a number"),
        (b"-1 3:x 11:1\n", r"line 3: '3:x' is not an index:value pair"),
        (b"-1 3:1 11\n", r"line 3: '11' is not an index:value pair"),
        (b"-1 0:1 11:1\n", r"line 3: feature index 0 is not in \[1, 123\]"),
        (b"-1 3:1 124:1\n", r"line 3: feature index 124 is not in \[1, 123\]"),
        (b"-1 11:1 3:1\n", r"line 3: feature index 3 follows 11"),
        (b"2 3:1 11:1\n", r"line 3: the label must be -1 or \+1, got 2"),
        (b"-1 3:nan 11:1\n", r"line 3: a feature value is not finite"),
        (b"+1 3:1 11:", r"line 3: '11:' is not an index:value pair"),  # cut short
    ],
)
def test_malformed_a9a(line, match, tmp_path, data_home):
    lines = _a9a_lines(data_home)
    # A line without its newline ends the file, cut short.
    content = b"".join(lines[:2] + [line] + (lines[3:] if line.endswith(b"\n") else []))
    home, path = _home_with(tmp_path, "a9a/a9a", content)
    _assert_malformed("a9a/a9a", home, path, match)


def test_empty_a9a(tmp_path):
    home, path = _home_with(tmp_path, "a9a/a9a.t", b"")
    _assert_malformed("a9a/a9a.t", home, path, "no data rows")


def _usps_lines(data_home, n=8):
    with gzip.open(Path(data_home) / "usps/zip.train.gz") as f:
        return [next(f) for _ in range(n)]


def _replace_line(lines, i, line):
    return b"".join(lines[:i] + [line] + lines[i + 1 :])


@pytest.mark.parametrize(
    "edit, match",
    [
        # The fifth line without its last value, with one more, with text.
        (lambda ls: _replace_line(ls, 4, b" ".join(ls[4].split()[:-1]) + b"\n"),
         "line 5 has 256 fields, expected 257"),
        (lambda ls: _replace_line(ls, 4, ls[4].rstrip() + b" 0.5\n"),
         "line 5 has 258 fields, expected 257"),
        (lambda ls: _replace_line(ls, 4, ls[4].replace(b"-1.0000", b"abc", 1)),
         "line 5: 'abc' is not a number"),
        (lambda ls: _replace_line(ls, 4, b"10" + ls[4][ls[4].index(b" "):]),
         "line 5: the first field, the digit, must be 0 to 9, got 10"),
        (lambda ls: _replace_line(ls, 4, b"1.5" + ls[4][ls[4].index(b" "):]),
         "line 5: the first field, the digit, must be 0 to 9, got 1.5"),
        (lambda ls: _replace_line(ls, 4, ls[4].replace(b"-1.0000", b"inf", 1)),
         "line 5: a value is not finite"),
        (lambda ls: _replace_line(ls, 4, b"\xff" + ls[4]), "not a text file"),
        (lambda ls: b"", "no data rows"),
    ],
)  # fmt: skip
def test_malformed_usps_rows(edit, match, tmp_path, data_home):
    content = gzip.compress(edit(_usps_lines(data_home)))
    home, path = _home_with(tmp_path, "usps/zip.train.gz", content)
    _assert_malformed("usps/zip.train.gz", home, path, match)


@pytest.mark.parametrize(
    "damage",
    [
        lambda gz: gz[: len(gz) // 2],  # truncated: EOFError before
        lambda gz: gz[:-8] + bytes(8),  # CRC and size zeroed
        lambda gz: _flip(gz, 100),
        lambda gz: gzip.decompress(gz),  # not compressed at all
    ],
)
def test_damaged_usps_archive(damage, tmp_path, data_home):
    content = damage((Path(data_home) / "usps/zip.train.gz").read_bytes())
    home, path = _home_with(tmp_path, "usps/zip.train.gz", content)
    _assert_malformed("usps/zip.train.gz", home, path, "not a valid gzip file")


def test_one_row_usps_copy_is_read(tmp_path, data_home):
    # One row is a valid table (np.loadtxt made it a vector: IndexError).
    line = _usps_lines(data_home, 1)[0]
    home, _ = _home_with(tmp_path, "usps/zip.train.gz", gzip.compress(line))
    bunch = fetch_usps(data_home=home, verify_checksum=False, positive_digit=None)
    assert bunch.data.shape == (1, 256) and bunch.target.tolist() == [int(float(line.split()[0]))]


BANANA_HEAD = "X1,X2,Y\n0.81189519,-0.19526175,1\n1.5,3,-1\n-0.5,2,1\n"


@pytest.mark.parametrize(
    "content, match",
    [
        ("X1,X2,Y\n", "no data rows"),  # header only: IndexError before
        ("X1,X2,Y", "no data rows"),
        ("", "line 1 should be the header 'X1,X2,Y', got ''"),
        (BANANA_HEAD.split("\n", 1)[1], "line 1 should be the header 'X1,X2,Y'"),
        ("X1,X2,Y\n0.5,1\n1.5,-1\n", "line 2 has 2 fields, expected 3"),  # a column dropped
        (BANANA_HEAD + "0.5,1\n", "line 5 has 2 fields, expected 3"),
        (BANANA_HEAD + "0.5,1,1,1\n", "line 5 has 4 fields, expected 3"),
        (BANANA_HEAD + "0.5,abc,1\n", "line 5: 'abc' is not a number"),
        (BANANA_HEAD + "0.5,nan,1\n", "line 5: a value is not finite"),
        (BANANA_HEAD + "0.5,0.5,0\n", r"line 5: the label must be -1 or \+1, got 0"),
        (BANANA_HEAD + "\n# note\n0.5,0.5,2\n", r"line 7: the label must be -1 or \+1"),
    ],
)
def test_malformed_banana(content, match, tmp_path):
    home, path = _home_with(tmp_path, "banana/banana.csv", content.encode())
    _assert_malformed("banana/banana.csv", home, path, match)


def _waveform(data_home):
    mat = loadmat(Path(data_home) / "waveform/waveform.mat")
    return {"data": mat["data"], "target": mat["target"]}


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda m: m.pop("data"), r"no variable 'data' \(it holds \['target'\]\)"),  # KeyError
        (lambda m: m.pop("target"), r"no variable 'target'"),
        (lambda m: m.update(data=m["data"][:, :20]),
         r"'data' should be a numeric matrix of 21 columns, got an array of shape \(5000, 20\)"),
        (lambda m: m.update(data="hello"), r"'data' should be a numeric matrix"),
        (lambda m: m.update(target=m["target"][:-1]),
         r"'target' should be a numeric vector of 5000 labels"),
        (lambda m: m.update(target=(m["target"] > 0).astype(float)),
         r"row 5 of 'target': the label must be -1 or \+1, got 0"),
        (lambda m: m["data"].__setitem__((3, 7), np.nan),
         r"row 4 of 'data': a value is not finite"),
    ],
)  # fmt: skip
def test_malformed_waveform_variables(edit, match, tmp_path, data_home):
    mat = _waveform(data_home)
    assert mat["target"][4, 0] == -1  # the first -1, for the label case above
    edit(mat)
    path = tmp_path / "home" / "waveform" / "waveform.mat"
    path.parent.mkdir(parents=True)
    savemat(path, mat)
    _assert_malformed("waveform/waveform.mat", str(tmp_path / "home"), path, match)


@pytest.mark.parametrize(
    "damage",
    [
        lambda mat: mat[: len(mat) // 2],
        lambda mat: mat[:100],
        lambda mat: _flip(mat, len(mat) // 2),  # zlib.error before
        lambda mat: b"",
        lambda mat: b"not a MATLAB file\n" * 10,
    ],
)
def test_damaged_waveform_file(damage, tmp_path, data_home):
    content = damage((Path(data_home) / "waveform/waveform.mat").read_bytes())
    home, path = _home_with(tmp_path, "waveform/waveform.mat", content)
    _assert_malformed("waveform/waveform.mat", home, path, "not a readable MATLAB file")


# The MNIST files: gzipped IDX, a header of big-endian int32 (the magic
# number, then the dimensions) and one unsigned byte per value.


def _idx(magic, shape, values):
    header = np.array([magic, *shape], dtype=">i4").tobytes()
    # mtime=0: the same bytes on every run (and every pytest-xdist worker).
    return gzip.compress(header + np.asarray(values, dtype=np.uint8).tobytes(), mtime=0)


def _mnist_home(tmp_path, data_home, images=None, labels=None):
    """A data home with the shared MNIST files, or the given contents."""
    home = tmp_path / "home" / "mnist"
    home.mkdir(parents=True)
    for name, content in (("t10k-images-idx3-ubyte.gz", images),
                          ("t10k-labels-idx1-ubyte.gz", labels)):  # fmt: skip
        if content is None:
            content = (Path(data_home) / "mnist" / name).read_bytes()
        (home / name).write_bytes(content)
    return str(home.parent), home


@pytest.mark.parametrize(
    "images, labels, bad, match",
    [
        (_idx(2049, (2, 28, 28), np.zeros(2 * 784)), _idx(2049, (2,), [1, 2]), IMAGES,
         "the IDX magic number should be 2051, got 2049"),
        (_idx(2051, (2, 28, 28), np.zeros(2 * 784)), _idx(2051, (2,), [1, 2]), LABELS,
         "the IDX magic number should be 2049, got 2051"),
        (_idx(2051, (2, 28, 28), np.zeros(2 * 784 - 1)), _idx(2049, (2,), [1, 2]), IMAGES,
         "the header announces 2 x 28 x 28 = 1568 values, the file holds 1567"),
        (_idx(2051, (2, 28, 28), np.zeros(2 * 784)), _idx(2049, (3,), [1, 2, 3]), LABELS,
         "3 labels for the 2 images"),
        (_idx(2051, (2, 28, 28), np.zeros(2 * 784)), _idx(2049, (2,), [1, 12]), LABELS,
         "label 2: the digit must be 0 to 9, got 12"),
        (_idx(2051, (1, 32, 32), np.zeros(1024)), _idx(2049, (1,), [1]), IMAGES,
         r"images should be 28 x 28, got \(32, 32\)"),
        (gzip.compress(b"\x00\x00", mtime=0), _idx(2049, (1,), [1]), IMAGES,
         "shorter than the IDX header"),
        (_idx(2051, (2, 28, 28), np.zeros(2 * 784))[:-20], _idx(2049, (2,), [1, 2]), IMAGES,
         "not a valid gzip file"),
    ],
    ids=["images-magic", "labels-magic", "images-size", "label-count", "label-value",
         "image-shape", "short-header", "truncated-gzip"],
)  # fmt: skip
def test_malformed_mnist(images, labels, bad, match, tmp_path, data_home):
    home, folder = _mnist_home(tmp_path, data_home, images, labels)
    _assert_malformed(IMAGES, home, Path(home) / bad, match)


def test_small_mnist_copy_is_read(tmp_path, data_home):
    values = np.arange(2 * 784) % 256
    home, _ = _mnist_home(tmp_path, data_home, _idx(2051, (2, 28, 28), values),
                          _idx(2049, (2,), [3, 9]))  # fmt: skip
    X, y = fetch_mnist(data_home=home, verify_checksum=False, return_X_y=True)
    np.testing.assert_array_equal(X, values.reshape(2, 784))
    assert y.tolist() == [3, 9]


@pytest.mark.parametrize(
    "filename, line, match",
    [
        ("dna/dna.scale", b"4 2:1 7:1\n",
         r"line 3: the label must be an integer from 1 to 3, got 4"),
        ("dna/dna.scale", b"1 2:1 181:1\n", r"line 3: feature index 181 is not in \[1, 180\]"),
        ("satimage/satimage.scale", b"7 1:0.5\n",
         r"line 3: the label must be an integer from 1 to 6, got 7"),
        ("satimage/satimage.scale.t", b"2 1:x\n", r"line 3: '1:x' is not an index:value pair"),
        ("pendigits/pendigits", b"10 1:47 2:100\n",
         r"line 3: the label must be an integer from 0 to 9, got 10"),
        ("pendigits/pendigits.t", b"1 1:inf\n", "line 3: a feature value is not finite"),
        ("pendigits/pendigits", b"1.5 1:47\n",
         r"the label must be an integer from 0 to 9, got 1.5"),
    ],
    ids=["dna-label", "dna-index", "satimage-label", "satimage-pair", "pendigits-label",
         "pendigits-inf", "pendigits-fraction"],
)  # fmt: skip
def test_malformed_multiclass(filename, line, match, tmp_path, data_home):
    lines = (Path(data_home) / filename).read_bytes().splitlines(keepends=True)[:5]
    home, path = _home_with(tmp_path, filename, b"".join(lines[:2] + [line] + lines[3:]))
    _assert_malformed(filename, home, path, match)


@pytest.mark.parametrize("filename", ["dna/dna.scale.t", "satimage/satimage.scale"])
def test_empty_multiclass_file(filename, tmp_path):
    home, path = _home_with(tmp_path, filename, b"")
    _assert_malformed(filename, home, path, "no data rows")
