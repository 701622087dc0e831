"""Data home, checksum-verified downloads and checks of the local data files.

Every fetcher reads its files from a *data home* folder, laid out as
``<data_home>/<data set>/<file>`` (for example ``<data_home>/a9a/a9a`` or
``<data_home>/usps/zip.train.gz``). A file missing from the data home is
downloaded from its canonical URL into a temporary file beside its target,
its SHA256 checksum is verified while it streams, and only then is it
renamed into place, so a partial or corrupted download never appears under
the final name.

Files already present in the data home (downloaded earlier, copied from
elsewhere, or in a read-only shared folder) are checked against the same
checksums on their first use in a process: a truncated or altered copy raises
a :class:`DataFileError` instead of loading silently. The result is cached in
memory, keyed by the file's path, device, inode, size and modification and
change times, so a file is hashed once per process and again only when it
changes. The cache is not written to disk: the data home may be read-only,
and hashing the largest file (a9a, 2.3 MB) takes a few milliseconds, far less
than parsing it. The fetchers' ``verify_checksum=False`` skips the check for a
deliberately modified copy of the data; their parsers still reject malformed
files.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import hashlib
import logging
import os
import tempfile
from collections import namedtuple
from urllib.request import urlopen

from sklearn.utils._param_validation import validate_params

logger = logging.getLogger(__name__)

#: Environment variable naming the data home when no ``data_home`` is passed.
DATA_HOME_ENV = "SKLEARN_BUDGET_DATA"

#: One downloadable file: its path relative to the data home (with ``/``
#: separators), its canonical URL and the SHA256 hex digest of its content.
RemoteFileMetadata = namedtuple("RemoteFileMetadata", ["filename", "url", "checksum"])

_CHUNK_SIZE = 1 << 16
_TIMEOUT = 60  # seconds without data before a download is abandoned

# Files whose checksum matched: {(absolute path, expected checksum): the
# file's signature (see _signature) when it was hashed}.
_VERIFIED = {}


class DataFileError(OSError):
    """A data file is corrupted, malformed or not the expected file.

    Raised by the fetchers of :mod:`sklearn_budget.datasets` when a file's
    SHA256 checksum differs from the expected one (a local file, or a
    download, which is then discarded), or when a file cannot be parsed as
    the data set it should hold: a truncated archive, rows of the wrong
    length, fields that are not numbers, missing variables. The message
    names the file, what is wrong with it and how to fix it.

    A subclass of :class:`OSError`, like the error of a missing file that
    cannot be downloaded: both mean that the data on disk cannot be used, and
    ``except OSError`` handles every such case.
    """


@validate_params(
    {
        "data_home": [str, os.PathLike, None],
    },
    prefer_skip_nested_validation=True,
)
def get_data_home(data_home=None) -> str:
    """Return the path of the sklearn-budget data folder.

    The fetchers of :mod:`sklearn_budget.datasets` read their files from this
    folder, laid out as ``<data_home>/a9a/a9a``,
    ``<data_home>/usps/zip.train.gz``, ``<data_home>/banana/banana.csv``,
    ``<data_home>/waveform/waveform.mat`` and so on, and download the files
    that are missing into it.

    The folder is, in order of precedence: the ``data_home`` argument, the
    ``SKLEARN_BUDGET_DATA`` environment variable, or ``scikit_learn_data`` in
    the user's home folder (the default data home of scikit-learn). The
    ``'~'`` symbol is expanded to the user's home folder.

    Unlike :func:`sklearn.datasets.get_data_home`, this function does not
    create the folder, so that it can point at a read-only copy of the data;
    a download creates the folders it needs.

    Parameters
    ----------
    data_home : str or path-like, default=None
        The path to the data folder. If `None`, the ``SKLEARN_BUDGET_DATA``
        environment variable if it is set, else ``~/scikit_learn_data``.

    Returns
    -------
    data_home : str
        The path to the data folder, with ``'~'`` expanded.

    Examples
    --------
    >>> from sklearn_budget.datasets import get_data_home
    >>> get_data_home("/srv/data")
    '/srv/data'
    """
    if data_home is None:
        data_home = os.environ.get(DATA_HOME_ENV) or os.path.join("~", "scikit_learn_data")
    return os.path.expanduser(os.fspath(data_home))


def _local_path(remote, data_home):
    return os.path.join(data_home, *remote.filename.split("/"))


def _fetch_remote(remote, data_home):
    """Download ``remote`` into ``data_home`` and verify its checksum.

    The content streams into a temporary file in the target folder while its
    SHA256 digest is computed; on a mismatch the temporary file is deleted and
    a `DataFileError` names the file and both checksums. On success the file is
    renamed into place with :func:`os.replace`, which is atomic on one file
    system, so concurrent fetches of the same file are safe.

    Returns
    -------
    path : str
        The path of the downloaded file.
    """
    path = _local_path(remote, data_home)
    folder = os.path.dirname(path)
    logger.info("Downloading %s to %s", remote.url, path)
    tmp_path = None
    # The folders this call creates, removed again if the download fails.
    created = []
    parent = folder
    while parent and not os.path.exists(parent):
        created.append(parent)
        parent = os.path.dirname(parent)
    try:
        try:
            os.makedirs(folder, exist_ok=True)
            fd, tmp_path = tempfile.mkstemp(prefix=os.path.basename(path) + ".part_", dir=folder)
            digest = hashlib.sha256()
            with os.fdopen(fd, "wb") as out, urlopen(remote.url, timeout=_TIMEOUT) as response:
                for chunk in iter(lambda: response.read(_CHUNK_SIZE), b""):
                    digest.update(chunk)
                    out.write(chunk)
        except OSError as exc:
            raise OSError(
                f"Could not download {remote.url} to {path}: {exc}. Without network "
                f"access, copy the file there by other means, or point to a folder that "
                f"holds it (as <data_home>/{remote.filename}) with the data_home argument "
                f"or the {DATA_HOME_ENV} environment variable."
            ) from exc
        checksum = digest.hexdigest()
        if checksum != remote.checksum:
            raise DataFileError(
                f"The SHA256 checksum of {remote.filename} downloaded from {remote.url} "
                f"({checksum}) differs from the expected one ({remote.checksum}); "
                f"the file was discarded."
            )
        os.replace(tmp_path, path)
        # Just verified while it streamed: no need to hash it again on load.
        _VERIFIED[_verified_key(remote, path)] = _signature(path)
    except BaseException:
        if tmp_path is not None and os.path.exists(tmp_path):
            os.unlink(tmp_path)
        for path_created in created:  # deepest first
            try:
                os.rmdir(path_created)
            except OSError:
                break
        raise
    return path


def _signature(path):
    """What identifies one version of a file without reading it."""
    st = os.stat(path)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _verified_key(remote, path):
    return (os.path.abspath(path), remote.checksum)


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK_SIZE), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _verify_local(remote, path):
    """Check the SHA256 checksum of a file of the data home, once per version.

    Raises a `DataFileError` naming the file, both checksums and the remedies
    on a mismatch. A match is cached (see the module docstring).
    """
    key = _verified_key(remote, path)
    # Taken before hashing: if the file changes meanwhile, the next call
    # sees another signature and hashes it again.
    signature = _signature(path)
    if _VERIFIED.get(key) == signature:
        return
    checksum = _sha256(path)
    if checksum != remote.checksum:
        raise DataFileError(
            f"The data file {path} does not match the expected checksum of "
            f"{remote.filename}: its SHA256 is {checksum}, expected {remote.checksum}. It may "
            f"be truncated, corrupted or another version of the data. Delete it to download "
            f"it again from {remote.url}, or, if it is a deliberately modified copy, load it "
            f"with verify_checksum=False."
        )
    _VERIFIED[key] = signature


def _ensure_local(remote, data_home, download_if_missing, verify_checksum=True):
    """Path of ``remote`` in ``data_home``, downloaded first if it is missing.

    A file already present is checked against its checksum if
    ``verify_checksum`` (see the module docstring); a download always is.
    """
    path = _local_path(remote, data_home)
    if os.path.exists(path):
        if not os.path.isfile(path):
            raise DataFileError(
                f"The data file {path} is not a regular file. Remove it to download "
                f"{remote.filename} again, or point to another data home."
            )
        if verify_checksum:
            _verify_local(remote, path)
        return path
    if not download_if_missing:
        raise OSError(
            f"Data file not found: {path} does not exist in the data home {data_home} "
            f"and download_if_missing=False. Point to a folder holding the data (laid out "
            f"as <data_home>/{remote.filename}) with the data_home argument or the "
            f"{DATA_HOME_ENV} environment variable, or pass download_if_missing=True to "
            f"download it from {remote.url}."
        )
    return _fetch_remote(remote, data_home)
