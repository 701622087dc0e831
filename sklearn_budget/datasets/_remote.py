"""The files the loaders read: where each lives in the data home, where it
is downloaded from, and its SHA256 checksum."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from ._base import RemoteFileMetadata, _ensure_local

_LIBSVM_BINARY = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/"
_LIBSVM_MULTICLASS = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass/"
_ESL_DATASETS = "https://hastie.su.domains/ElemStatLearn/datasets/"
# LeCun's own site (yann.lecun.com/exdb/mnist) often refuses downloads; this
# mirror serves the same files (their checksums are those of the originals).
_MNIST = "https://ossci-datasets.s3.amazonaws.com/mnist/"

# Every file the fetchers read: path in the data home, canonical URL, SHA256.
# The fetchers look their files up here at call time.
REMOTE_FILES = (
    RemoteFileMetadata(
        filename="a9a/a9a",
        url=_LIBSVM_BINARY + "a9a",
        checksum="f5d5ffd8d865ff41328e7ee043e4b020816914ff6843ff15b98905ddbedce906",
    ),
    RemoteFileMetadata(
        filename="a9a/a9a.t",
        url=_LIBSVM_BINARY + "a9a.t",
        checksum="7d8c09f1120d9ff231d85caba98956906033f3c4d53e2b15ab7ef83710de6a76",
    ),
    RemoteFileMetadata(
        filename="usps/zip.train.gz",
        url=_ESL_DATASETS + "zip.train.gz",
        checksum="66ebf231ab51f2cf6ac1a892d0f98ccffee1079d7a5db638c1f11f366046ca16",
    ),
    RemoteFileMetadata(
        filename="usps/zip.test.gz",
        url=_ESL_DATASETS + "zip.test.gz",
        checksum="8dacc3c6e136af6c3488de9e5113a7daf140c8c2f1f0b61c54ee02f03f1a962f",
    ),
    # The Raetsch benchmark site that first distributed Banana and Waveform is
    # gone (its data now lives on in tdiethe/gunnar_raetsch_benchmark_datasets,
    # in another format). These URLs are public copies pinned to a commit: the
    # CSV export of Banana ("X1,X2,Y" header; its size and the rows checked
    # match the file of this checksum), and Waveform as a MATLAB file holding
    # `data` and `target` (a binary file not yet checked against the
    # checksum). The checksum check rejects any other content.
    RemoteFileMetadata(
        filename="banana/banana.csv",
        url=(
            "https://raw.githubusercontent.com/basarbatucan/NP-NN/"
            "409ebf3bd4b91a1ccc2bb50fdefbfabe77c30ddc/data/banana.csv"
        ),
        checksum="390a30b5037c8eb6355a34478311d8d0da776c0260f03055a771441535808959",
    ),
    RemoteFileMetadata(
        filename="waveform/waveform.mat",
        url=(
            "https://raw.githubusercontent.com/Devn913/AGMR_entropy_sparse/"
            "d2acc13cba3e83de7a38086d30bc9223b92965bc/twin_datasets/waveform.mat"
        ),
        checksum="f783135eb00109cb241f65481be36c011cc1fc13df6180d512d2a2a3488e9db3",
    ),
    RemoteFileMetadata(
        filename="mnist/t10k-images-idx3-ubyte.gz",
        url=_MNIST + "t10k-images-idx3-ubyte.gz",
        checksum="8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
    ),
    RemoteFileMetadata(
        filename="mnist/t10k-labels-idx1-ubyte.gz",
        url=_MNIST + "t10k-labels-idx1-ubyte.gz",
        checksum="f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
    ),
    RemoteFileMetadata(
        filename="dna/dna.scale",
        url=_LIBSVM_MULTICLASS + "dna.scale",
        checksum="03d39477c5e48415e9cd18e006efc8f7a3b5c3deaee8289a72511c35070e3cfe",
    ),
    RemoteFileMetadata(
        filename="dna/dna.scale.t",
        url=_LIBSVM_MULTICLASS + "dna.scale.t",
        checksum="d2eeed170e4e38ae2aba6aa4cd27a8ca4ecceb01a7751e8e509bb4e1a6bcef39",
    ),
    RemoteFileMetadata(
        filename="satimage/satimage.scale",
        url=_LIBSVM_MULTICLASS + "satimage.scale",
        checksum="df08755887b968a272b84247fa0b1543b8cd623442fbc1c7943144e459ef2eb6",
    ),
    RemoteFileMetadata(
        filename="satimage/satimage.scale.t",
        url=_LIBSVM_MULTICLASS + "satimage.scale.t",
        checksum="b04c60323488f5a7f571d40be5d750b279e8f3bd43729b4c109b8c013fcd8196",
    ),
    RemoteFileMetadata(
        filename="pendigits/pendigits",
        url=_LIBSVM_MULTICLASS + "pendigits",
        checksum="6e8a2f318a24d97d26a9c381642621dc955fed73ec44c4d417bd7afbb47ed67c",
    ),
    RemoteFileMetadata(
        filename="pendigits/pendigits.t",
        url=_LIBSVM_MULTICLASS + "pendigits.t",
        checksum="5ddb2f034e1c5ca8a47b8a7e78510f8a9d68015cf40a5031534c693fba9773d3",
    ),
)


def _local_file(filename, data_home, download_if_missing, verify_checksum):
    """Path of one file of `REMOTE_FILES`, downloaded first if missing."""
    for remote in REMOTE_FILES:
        if remote.filename == filename:
            return _ensure_local(remote, data_home, download_if_missing, verify_checksum)
    raise KeyError(f"{filename} is not in REMOTE_FILES")  # pragma: no cover
