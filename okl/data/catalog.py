"""The one place that declares every real dataset: where its files come from, their checksums, how to
parse them, its task, size and default preprocessing.

A dataset (:class:`Spec`) has parts (``train``, ``test``); a part can be obtained from several
:class:`Source` s, tried in order: the canonical download first, then the copies of the project
mirror (``shared/datasets``, see its SOURCES.md), which are sometimes another layout of the same
records (cadata: StatLib CSV instead of LIBSVM; cpusmall: PMLB TSV). Each source names its files and
the parser that turns them into (X, y) with the canonical column order.

Checksums. ``content_sha256`` is the hash of the decompressed bytes the parser reads, so a file is
recognised whatever its compression (LIBSVM's .bz2, the mirror's .xz); ``mirror_sha256`` is the hash
of the mirror's copy as stored (checked before it is read). ``None`` means no trustworthy hash is published
(SUSY, LIBSVM's cadata/cpusmall, ijcnn1's train file whose label spelling differs between copies):
the hash seen on first use is recorded in the cache and reported by ``okl-data verify``, and a parse must give
the part's ``rows`` (a truncated copy is refused).

Presets (``dataset.preset``) are defined in :mod:`okl.data.preprocess`; ``presets`` below holds a
dataset's own departures from them (SUSY's header quirk, casp's label map, the Raker prefixes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

LIBSVM = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets"
UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"
RAKER = "https://raw.githubusercontent.com/N1cekiko/AdaRaker/master/dataset"
MNIST = ("https://storage.googleapis.com/cvdf-datasets/mnist", "http://yann.lecun.com/exdb/mnist")


@dataclass(frozen=True)
class File:
    """One file. ``name``: its name in the data directory; ``urls``: download URLs tried in order;
    ``mirror``: its path under the mirror root; ``member``: the member to read in a .zip archive."""

    name: str
    urls: tuple[str, ...] = ()
    mirror: str | None = None
    content_sha256: str | None = None
    mirror_sha256: str | None = None
    member: str | None = None


@dataclass(frozen=True)
class Libsvm:
    """LIBSVM text ``label index:value ...`` (indices from 1, features absent = 0) with ``d`` features."""

    d: int


@dataclass(frozen=True)
class Delimited:
    """Delimited text. ``target``: the label/target column (name, or index when there is no header);
    ``features``: feature columns in canonical order (None: every column but the target and ``drop``);
    ``missing``: a sentinel meaning "missing", whose rows are dropped; ``blank_records``: skip records
    whose fields are all empty; ``float32``: values went through float32 and are restored to their
    shortest decimal (PMLB)."""

    sep: str = ","
    decimal: str = "."
    header: bool = True
    target: str | int = 0
    features: tuple[str | int, ...] | None = None
    drop: tuple[str, ...] = ()
    missing: float | None = None
    blank_records: bool = False
    float32: bool = False


@dataclass(frozen=True)
class Idx:
    """LeCun's IDX pair: an unsigned-byte image file and its label file (kept as uint8 in the cache)."""


@dataclass(frozen=True)
class Mat:
    """MATLAB .mat with ``X`` (features × T) and ``y`` (T × 1), as the Raker authors store them."""

    x_key: str = "X"
    y_key: str = "y"


Format = Libsvm | Delimited | Idx | Mat


@dataclass(frozen=True)
class Source:
    """A way to obtain a part: its files and their parser. ``note`` says how it differs from canonical."""

    files: tuple[File, ...]
    format: Format
    note: str = ""


@dataclass(frozen=True)
class Part:
    name: str
    rows: int
    sources: tuple[Source, ...]


@dataclass(frozen=True)
class Spec:
    """A dataset: ``parts`` (default selection ``default_parts``, concatenated in order), ``task``,
    feature count ``d``, its default preset and per-preset departures, the label values mapped to +1
    (binary) and the target columns a user may choose (``dataset.target``)."""

    name: str
    title: str
    task: str
    d: int
    parts: tuple[Part, ...]
    default_parts: tuple[str, ...]
    preset: str
    presets: dict[str, dict[str, Any]] = field(default_factory=dict)
    positive: tuple[float, ...] = (1.0,)
    targets: tuple[str, ...] = ()

    def part(self, name: str) -> Part:
        return next(p for p in self.parts if p.name == name)

    @property
    def n(self) -> int:
        """Rows of the default parts, before any preset selection."""
        return sum(self.part(p).rows for p in self.default_parts)


def _one(name: str, rows: int, *sources: Source) -> tuple[Part, ...]:
    return (Part(name, rows, sources),)


def _raker(name: str, title: str, mat: str, d: int, rows: int, task: str, sha: str, **presets) -> Spec:
    file = File(
        f"{mat}.mat", urls=(f"{RAKER}/{mat}.mat",), mirror=f"raker/{mat}.mat", content_sha256=sha, mirror_sha256=sha
    )
    note = "the Raker authors' preprocessed file: x (and regression y) already min-max scaled to [0,1]"
    raker = {"x_scale": "none", "y_scale": "none", **presets}
    return Spec(
        name, title, task, d, _one("all", rows, Source((file,), Mat(), note)), ("all",), "raker", {"raker": raker}
    )


def _libsvm(part: str, rows: int, d: int, name: str, mirror: str, content: str, stored: str) -> Part:
    """A LIBSVM part downloaded from the LIBSVM site (``name`` there) and mirrored as ``mirror``."""
    file = File(name, (f"{LIBSVM}/binary/{name}",), mirror, content_sha256=content, mirror_sha256=stored)
    return Part(part, rows, (Source((file,), Libsvm(d)),))


PARKINSON_TARGETS = ("total_UPDRS", "motor_UPDRS")
# The 16 biomedical voice measures, from which "the main aim of the data is to predict the motor and total
# UPDRS scores" (parkinsons_updrs.names). Left out: subject#, age, sex, test_time and the other UPDRS score
# (motor_UPDRS is part of total_UPDRS: as a feature it made the BATCH loss 0.0046, a tenth of the paper's).
PARKINSON_VOICE = (
    "Jitter(%)", "Jitter(Abs)", "Jitter:RAP", "Jitter:PPQ5", "Jitter:DDP", "Shimmer", "Shimmer(dB)", "Shimmer:APQ3",
    "Shimmer:APQ5", "Shimmer:APQ11", "Shimmer:DDA", "NHR", "HNR", "RPDE", "DFA", "PPE",
)  # fmt: skip
AIR_TARGETS = ("CO(GT)", "C6H6(GT)", "NOx(GT)", "NO2(GT)")
# LIBSVM's cadata order: median_income, housing_median_age, total_rooms, total_bedrooms, population,
# households, latitude, longitude; StatLib's cal_housing.data has longitude, latitude, age, rooms, bedrooms,
# population, households, income, value.
CADATA_FROM_STATLIB = (7, 2, 3, 4, 5, 6, 1, 0)

SPECS: dict[str, Spec] = {
    s.name: s
    for s in (
        Spec(
            "casp",
            "UCI Physicochemical Properties of Protein Tertiary Structure (target RMSD first)",
            "regression",
            9,
            _one(
                "all",
                45_730,
                Source(
                    (
                        File(
                            "CASP.csv",
                            urls=(f"{UCI}/00265/CASP.csv",),
                            mirror="casp/CASP.csv.xz",
                            content_sha256="4277cfcb4e91a181746cbc654f001b57951c9e6a80f4f795fdb5c807e0848f40",
                            mirror_sha256="8854e15ec1bad0aac003f77d651770b382124e7545d2a8b585330f76d0177254",
                        ),
                    ),
                    Delimited(target="RMSD"),
                ),
            ),
            ("all",),
            "pkawv",
            {"pkawv": {"y_scale": "pkawv_csv"}, "pkawv_paper": {"y_scale": "pkawv_csv"}},
        ),
        Spec(
            "cod_rna",
            "cod-rna (LIBSVM binary); the papers' n = 271,617 is cod-rna.t alone",
            "binary",
            8,
            (
                _libsvm(
                    "train",
                    59_535,
                    8,
                    "cod-rna",
                    "cod-rna/cod-rna.xz",
                    "65b7cc0689fc29bba5db8b50fab0b6446d985f4bf8f6f5dd474f7df8b2f1ab6c",
                    "6f0595937cf48ab75d154448edf2616b9a186a4bf94c40d973e0bf0ea40f63f5",
                ),
                _libsvm(
                    "test",
                    271_617,
                    8,
                    "cod-rna.t",
                    "cod-rna/cod-rna.t.xz",
                    "58cff16df896436b06343df78ccaef37a6979d819abbcadbec3cb16b93938df6",
                    "8c939854c7b6d3d913bfe828f5ae1479bf56c8b4e0d4cf558dab83c38a63b6d8",
                ),
            ),
            ("test",),
            "pkawv",
        ),
        Spec(
            "ijcnn1",
            "ijcnn1 (LIBSVM binary); PROS-N-KONS's n = 141,691 is train + test",
            "binary",
            22,
            (
                Part(
                    "train",
                    49_990,
                    (
                        Source(
                            (File("ijcnn1.bz2", urls=(f"{LIBSVM}/binary/ijcnn1.bz2",)),),
                            Libsvm(22),
                        ),
                        Source(
                            (
                                File(
                                    "ijcnn1.xz",
                                    mirror="ijcnn1/ijcnn1.xz",
                                    content_sha256="7fe291672c3fefe6a7e3c51529becd23f0e985ba05ffb8d53c9c648c1e91cc19",
                                    mirror_sha256="6bc7f9c90027c776abe3fa872790d4d7663afcaffd6e52e72675a83bfb3d760a",
                                ),
                            ),
                            Libsvm(22),
                            "tick-datasets copy: labels written -1.0/1.0, rows = ijcnn1.tr then ijcnn1.val",
                        ),
                    ),
                ),
                _libsvm(
                    "test",
                    91_701,
                    22,
                    "ijcnn1.t.bz2",
                    "ijcnn1/ijcnn1.t.xz",
                    "e7b0bbd518641980dc322746c6bc59d019d3153934e6258e48f9d8cfae2c4bb8",
                    "d6de15ee1c568cd6f417c0d0633ef649e7313058c30477fc6b2908b1c8c1922e",
                ),
            ),
            ("train", "test"),
            "pkawv",
        ),
        Spec(
            "susy",
            "UCI SUSY (headerless CSV.gz, label 0/1 first, 18 features)",
            "binary",
            18,
            _one(
                "all",
                5_000_000,
                Source((File("SUSY.csv.gz", urls=(f"{UCI}/00279/SUSY.csv.gz",)),), Delimited(header=False, target=0)),
            ),
            ("all",),
            "pkawv",
            # The authors' loader read the headerless file with pandas' default header=0 and nrows=10**6.
            {"pkawv": {"skip": 1, "length": 1_000_000}, "pkawv_paper": {"skip": 1, "length": 1_000_000}},
        ),
        Spec(
            "parkinson",
            "UCI Parkinsons Telemonitoring; features: the 16 voice measures (the paper lists d = 20)",
            "regression",
            16,
            _one(
                "all",
                5_875,
                Source(
                    (
                        File(
                            "parkinsons_updrs.data",
                            urls=(f"{UCI}/parkinsons/telemonitoring/parkinsons_updrs.data",),
                            mirror="parkinsons/parkinsons_updrs.data.xz",
                            content_sha256="f2c7d5025dec4e92e7feae367a5f7ccf58789a10ac6b54bdf15976c599f9dd39",
                            mirror_sha256="6fb3caac4a5a29c004cd1bdfaa310a476dd4aae7b8b36865ea1c1e9650705aa4",
                        ),
                    ),
                    Delimited(target="total_UPDRS", features=PARKINSON_VOICE),
                ),
            ),
            ("all",),
            "pros_n_kons",
            targets=PARKINSON_TARGETS,
        ),
        Spec(
            "cadata",
            "California housing (LIBSVM cadata; StatLib's cal_housing.data reordered to LIBSVM's columns)",
            "regression",
            8,
            _one(
                "all",
                20_640,
                Source((File("cadata", urls=(f"{LIBSVM}/regression/cadata",)),), Libsvm(8)),
                Source(
                    (
                        File(
                            "cal_housing.data.xz",
                            mirror="cadata/cal_housing.data.xz",
                            content_sha256="a2b44dcc7e1c9091b43c4f458b25cbd1f7e8068d08edd26bc4703108d3fa6214",
                            mirror_sha256="a4563015cd2b66aec2b790046bfdd99e1699040663a343fb9a41bd1509927bed",
                        ),
                    ),
                    Delimited(header=False, target=8, features=CADATA_FROM_STATLIB),
                    "StatLib layout; same records, row order against LIBSVM's file unchecked",
                ),
            ),
            ("all",),
            "pros_n_kons",
        ),
        Spec(
            "cpusmall",
            "Delve comp-activ cpu_small (LIBSVM cpusmall; PMLB's TSV has the same columns)",
            "regression",
            12,
            _one(
                "all",
                8_192,
                Source((File("cpusmall", urls=(f"{LIBSVM}/regression/cpusmall",)),), Libsvm(12)),
                Source(
                    (
                        File(
                            "227_cpu_small.tsv.gz",
                            mirror="cpusmall/227_cpu_small.tsv.gz",
                            content_sha256="53489b3c96e19bdd83a32a55d4d1ac7df5beb6ff6818e88c711f57dcf32c710d",
                            mirror_sha256="2d1386a66ab4548b5bdfc95581a77d5fd21852094da5ad2a7844b04e47e1e612",
                        ),
                    ),
                    Delimited(sep="\t", target="target", float32=True),
                    "PMLB copy: values passed through float32, restored to their shortest decimal",
                ),
            ),
            ("all",),
            "pros_n_kons",
        ),
        Spec(
            "airquality",
            "UCI Air Quality, raw hourly sensors; NMHC(GT) (8,443 of 9,357 missing) is left out and rows "
            "with a missing value (-200) are dropped",
            "regression",
            11,
            _one(
                "all",
                6_941,
                Source(
                    (
                        File(
                            "AirQualityUCI.zip",
                            urls=(f"{UCI}/00360/AirQualityUCI.zip",),
                            mirror="airquality/AirQualityUCI.csv.xz",
                            content_sha256="13277ae5d8581e80b7be09d47c7d3d06fe9b8e957078f2cf6e859f955e62f996",
                            mirror_sha256="ebbea266a5655a0cac044336c49976b5a33d1cdaff0499bdad784daffddde61d",
                            member="AirQualityUCI.csv",
                        ),
                    ),
                    Delimited(
                        sep=";",
                        decimal=",",
                        target="CO(GT)",
                        drop=("Date", "Time", "NMHC(GT)", "Unnamed: 15", "Unnamed: 16"),
                        missing=-200.0,
                        blank_records=True,
                    ),
                ),
            ),
            ("all",),
            "raker",
            targets=AIR_TARGETS,
        ),
        _raker(
            "twitter",
            "Buzz in social media, Twitter (Raker's file; the paper uses T = 6,000)",
            "TwitterData",
            77,
            13_813,
            "regression",
            "667066c5b8e2e16153d25082a4da77884293432abd1f744b991f4e55047b9dea",
            length=6_000,
        ),
        _raker(
            "tomshardware",
            "Buzz in social media, Tom's hardware (Raker's file)",
            "TomData",
            96,
            9_725,
            "regression",
            "56fd07284723b98a40f1e50b31ba24c1fef85588e90451ddea903f16c6dbf1b3",
        ),
        _raker(
            "energy",
            "Appliances energy prediction (Raker's file, d = 25; the paper uses T = 10,000)",
            "EnergyData",
            25,
            18_604,
            "regression",
            "7ee099ae8ed25820607dff789cf80e2bfbf908d3c7caade34197032553da5096",
            length=10_000,
        ),
        _raker(
            "air",
            "Air quality (Raker's file)",
            "AirData",
            13,
            7_322,
            "regression",
            "b372262a9478e06b8a775f0df4079747751e69b12bbcb986570c2530f2258051",
        ),
        _raker(
            "har",
            "Human activity recognition, binary (Raker's file)",
            "HarData",
            30,
            7_352,
            "binary",
            "d9660ca380a53b2a434b609d6a6cda1d69d1c0c0c0f015ff9f35554cc42e2769",
        ),
        _raker(
            "device",
            "Device classification, binary (Raker's file)",
            "DeviceData",
            60,
            3_583,
            "binary",
            "ed7e67156bb6c4d71859aeedc76862ba849e6bd4e5ae308e4ce6f2544bb98b60",
        ),
        _raker(
            "movement",
            "Movement classification, binary (Raker's file)",
            "MovementData",
            4,
            13_197,
            "binary",
            "dd0bddb6c3e9b0b5f79561b78b9969a9667d5c1777e26e0f6ebaa16578853023",
        ),
        Spec(
            "mnist",
            "MNIST handwritten digits (IDX), 10 classes; dataset.positive=[d] makes it binary one-vs-rest",
            "multiclass",
            784,
            tuple(
                Part(
                    part,
                    rows,
                    (
                        Source(
                            tuple(
                                File(
                                    f"{stem}.gz",
                                    urls=tuple(f"{root}/{stem}.gz" for root in MNIST),
                                    mirror=f"mnist/{stem}.xz",
                                    content_sha256=sha,
                                    mirror_sha256=staged,
                                )
                                for stem, sha, staged in files
                            ),
                            Idx(),
                        ),
                    ),
                )
                for part, rows, files in (
                    (
                        "train",
                        60_000,
                        (
                            (
                                "train-images-idx3-ubyte",
                                "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db",
                                "d151f9ea64d64a8315a392275491d8de4b7a175eaf3f7c596b4597223a688e65",
                            ),
                            (
                                "train-labels-idx1-ubyte",
                                "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5",
                                "db14ee4ce04c7f2006ebef1bc44e529435257977edf8f83181894465ba0a645f",
                            ),
                        ),
                    ),
                    (
                        "test",
                        10_000,
                        (
                            (
                                "t10k-images-idx3-ubyte",
                                "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7",
                                "83565bb7769a99fc50e1facf8d134bbc8896afbb05c71f9ca7d4a8c50de0790f",
                            ),
                            (
                                "t10k-labels-idx1-ubyte",
                                "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2",
                                "f2edae9ce0307abae4671a37b70e6e3858696b48b16c3cfdfef97388dc9925d5",
                            ),
                        ),
                    ),
                )
            ),
            ("train",),
            "polk",
            positive=(),
        ),
    )
}
