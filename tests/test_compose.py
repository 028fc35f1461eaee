"""okl.compose: the configs of a sweep's jobs, composed once per structure, are Hydra's configs node for node."""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hydra import compose, initialize_config_module
from hydra.core.global_hydra import GlobalHydra
from hydra.errors import ConfigCompositionException
from hydra.types import RunMode
from omegaconf import DictConfig, ListConfig, OmegaConf
from omegaconf.basecontainer import BaseContainer
from omegaconf.errors import OmegaConfBaseException

import okl.config  # noqa: F401  (registers the schema and the okl sweeper)
from hydra_plugins import okl_sweeper
from okl.compose import Composer, _SharedFilesLoader, _without_hydra, kept_folder
from okl.defaults_tree import OwnComposer
from okl.reproduce import sweep

JOBS = [
    [],
    ["seed=3"],
    ["seed=4", "n=200", "lam=0.1"],  # same structure as the previous: a cache hit
    ["learner=fogd", "learner.eta=0.1", "seed=2"],
    ["learner.eta=0.5", "learner=fogd"],  # a value before its group: Hydra applies values after composing
    ["dataset=casp", "n=100", "sigma=2.5"],
    ["learner=fogd", "+learner.extra=1"],  # add
    ["comparator=krr", "~comparator.name"],  # delete
    ["dataset.noise=0.3", "dataset=synthetic", "dataset.d=3"],
    ["experiment=pros_n_kons_table1", "seed=1"],
    ["+arm/pkawv=fogd", "dataset=synthetic"],  # an arm is a config group
    ["learner={name: fogd}"],  # a dict value is a value, even for a group's key
    ["+arm/pkawv=fogd", "+arm/awv=kernel_awv"],  # two arms overriding the learner: the first wins
    ["~comparator"],  # a deleted group: Hydra composes it (okl.defaults_tree leaves deletions to Hydra)
    ["hydra.job.chdir=true", "seed=1"],  # a hydra override: Hydra composes it
    ["+arm/pkawv=[fogd,krr]"],  # an options list: Hydra composes it
]
PRESETS = sorted(p.stem for p in Path(__file__).parents[1].joinpath("conf", "experiment").glob("*.yaml"))


@pytest.fixture
def hydra_context():
    with initialize_config_module(config_module="okl.conf", version_base="1.3"):
        yield GlobalHydra.instance().config_loader()


def _nodes(cfg, path=""):
    """Every node of ``cfg``: its path, class, flags, types and value (a container's: its keys, in order)."""
    meta = cfg._metadata
    types = (meta.ref_type, meta.optional, getattr(meta, "object_type", None), getattr(meta, "key_type", None))
    children = isinstance(cfg, DictConfig | ListConfig) and not (cfg._is_none() or cfg._is_interpolation())
    yield (
        path,
        type(cfg).__name__,
        meta.flags,
        types,
        getattr(meta, "element_type", None),
        cfg._value() if not children else None,
    )
    if children and not cfg._is_missing():
        for key in cfg.keys() if isinstance(cfg, DictConfig) else range(len(cfg)):
            yield from _nodes(cfg._get_node(key), f"{path}.{key}")


def _same(a, b) -> None:
    assert OmegaConf.to_yaml(a) == OmegaConf.to_yaml(b)
    assert list(_nodes(a)) == list(_nodes(b))
    assert a._get_flag("struct") == b._get_flag("struct")
    if "hydra" in a:
        assert a.hydra._get_flag("readonly") == b.hydra._get_flag("readonly")


@pytest.mark.parametrize("job", JOBS, ids=lambda j: " ".join(j) or "defaults")
def test_compose_is_hydra_compose(hydra_context, job):
    composer = Composer(hydra_context)
    for _ in range(2):  # composed, then from the cache
        _same(composer.compose(job), compose("config", overrides=job))


def test_sweep_configs_are_hydras_hydra_node_included(hydra_context):
    """What a launcher gets for each job of ``okl-run -m`` (task overrides, override_dirname, choices)."""
    master = hydra_context.load_configuration("config", ["hydra.job.chdir=false"], RunMode.MULTIRUN)
    composer = Composer(hydra_context)
    for job in [*JOBS, *reversed(JOBS)]:
        _same(composer.load_sweep_config(master, job), hydra_context.load_sweep_config(master, job))


def test_okl_runs_two_compositions_from_one_file_cache_are_hydras(hydra_context):
    """What okl-run's loader (okl.compose.main_reads_files_once) composes for Hydra's main: the config that gives
    hydra.mode (a sweep's config, unchecked), then the run's, reading the files once for both."""
    for job in (JOBS[0], JOBS[9], JOBS[14], ["hydra.searchpath=[pkg://okl.conf]", "seed=1"]):
        shared = _SharedFilesLoader(hydra_context.get_search_path())
        for mode, extra, checked in ((RunMode.MULTIRUN, [], False), (RunMode.RUN, ["hydra.mode=RUN"], True)):
            args = ("config", [*job, *extra], mode)
            _same(
                shared.load_configuration(*args, validate_sweep_overrides=checked),
                hydra_context.load_configuration(*args, validate_sweep_overrides=checked),
            )


def test_compose_each_gives_each_job_the_config_compose_gives_it(hydra_context, nothing_kept):
    """Jobs of one structure that change the same value nodes to scalars share a config, set again for each (the
    sweeps of a preset): each config, while it is the current one, is Hydra's for its job, with other structures,
    adds, deletions, dict values and a scalar over a mapping in between."""
    jobs = [
        *JOBS,
        ["learner=fogd", "seed=1", "learner.eta=0.5"],
        ["dataset=casp", "n=100", "sigma=2.5"],
        ["learner=fogd", "seed=2", "learner.eta=null"],
        ["learner=fogd", "seed=3", "learner.eta='${lam}'"],
        ["learner=fogd", "+learner.extra=1"],
        ["learner=fogd", "seed=4", "learner.eta=0.25"],
        ["sink=null", "seed=1"],
        ["sink=null", "seed=2"],
        ["learner={name: fogd}"],
        ["seed=5"],
    ]
    composer = Composer(hydra_context)
    for job, cfg in zip(jobs, composer.compose_each(jobs), strict=True):
        _same(cfg, compose("config", overrides=job))
    assert len({id(cfg) for cfg in composer.compose_each([["seed=1"], ["seed=2"], ["seed=1", "n=5"]])}) == 2


def test_jobs_do_not_share_state(hydra_context):
    composer = Composer(hydra_context)
    first = composer.compose(["seed=1"])
    first.learner.name = "changed by the first job"
    assert composer.compose(["seed=2"]).learner.name == compose("config").learner.name


@pytest.mark.parametrize(
    "job",
    [
        ["learner.no_such_key=1"],
        ["+seed=1"],
        ["~no_such_key"],
        ["learner=no_such_learner"],
        ["experiment=pros_n_kons_table1", "dataset=no_such_dataset"],
        ["experiment=pros_n_kons_table1", "arm/pros_n_kons=no_such_arm"],
        ["experiment=pros_n_kons_table1", "+learner=fogd"],
    ],
)
def test_errors_are_hydras(hydra_context, job):
    with pytest.raises(ConfigCompositionException) as ours:
        Composer(hydra_context).compose(job)
    with pytest.raises(ConfigCompositionException) as theirs:
        compose("config", overrides=job)
    assert str(ours.value) == str(theirs.value)


@pytest.fixture
def nothing_kept(tmp_path, monkeypatch):
    """An empty cache of kept compositions (the session's home keeps those of earlier tests)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def test_one_composition_per_structure(hydra_context, monkeypatch, nothing_kept):
    composer = Composer(hydra_context)
    calls = _counting(composer, monkeypatch)
    for seed in range(5):
        for learner in ("fogd", "pkawv_taylor"):
            composer.compose([f"learner={learner}", f"seed={seed}", f"lam={seed + 1}"])
    assert len(calls) == 2


def test_okl_run_sweeps_through_the_composer(hydra_context):
    okl_sweeper.install()  # as okl-run does
    assert compose("config", return_hydra_config=True).hydra.sweeper._target_ == "hydra_plugins.okl_sweeper.OklSweeper"


def _counting(composer: Composer, monkeypatch) -> list:
    """The compositions ``composer`` makes from now on: okl's own (okl.defaults_tree) and Hydra's."""
    calls = []
    for owner, name in ((type(composer._files()), "load_configuration"), (OwnComposer, "compose")):
        original = getattr(owner, name)
        monkeypatch.setattr(owner, name, lambda self, *a, _f=original, **k: calls.append(a) or _f(self, *a, **k))
    return calls


def test_compositions_are_kept_for_the_next_process(hydra_context, monkeypatch, nothing_kept):
    """A new process (here a new composer) reads each structure another composed from the data directory."""
    first = Composer(hydra_context)
    for job in JOBS:
        first.compose(job)
    assert list(kept_folder().glob("*/*.pkl"))
    second = Composer(hydra_context)
    calls = _counting(second, monkeypatch)
    for job in JOBS:
        _same(second.compose(job), compose("config", overrides=job))
    assert calls == []


def test_a_presets_sweeper_params_are_hydras_and_kept_for_the_next_process(hydra_context, monkeypatch, nothing_kept):
    """What ``okl-run -m experiment=<preset>`` sweeps over, read from the kept file by a new process (composer)."""
    job = ["experiment=pros_n_kons_table1"]
    swept = compose("config", overrides=job, return_hydra_config=True).hydra.sweeper.params
    expected = tuple((str(k), str(v)) for k, v in swept.items())
    assert len(expected) > 1 and Composer(hydra_context).sweeper_params(job) == expected
    with monkeypatch.context() as patched:
        patched.setattr(hydra_context, "load_configuration", lambda *a, **k: pytest.fail("composed again"))
        assert Composer(hydra_context).sweeper_params(job) == expected
    for kept in kept_folder().glob("*/*.pkl"):
        kept.write_bytes(b"not a pickle")
    assert Composer(hydra_context).sweeper_params(job) == expected  # a damaged file: composed again
    assert Composer(hydra_context).sweeper_params([]) == ()  # the base config sweeps nothing


def test_every_presets_sweeper_params_are_read_by_okl_as_hydra_composes_them(hydra_context, nothing_kept):
    composer = Composer(hydra_context)
    for job in [[], *([f"experiment={preset}"] for preset in PRESETS)]:
        swept = compose("config", overrides=job, return_hydra_config=True).hydra.sweeper.params
        ours = composer._own("config").sweeper_params("config", composer._parse(job))
        assert ours == tuple((str(k), str(v)) for k, v in (swept or {}).items()), job


def test_a_changed_config_file_is_composed_again(tmp_path, nothing_kept):
    """The kept compositions belong to the files' contents: an edited file (or schema, or version) is read."""
    folder = tmp_path / "conf"
    (folder / "learner").mkdir(parents=True)
    (folder / "config.yaml").write_text("defaults:\n  - learner: a\n  - _self_\nseed: 0\n")
    (folder / "learner" / "a.yaml").write_text("eta: 1.0\n")
    from hydra import initialize_config_dir

    def composed(job):
        with initialize_config_dir(config_dir=str(folder), version_base="1.3"):
            return Composer(GlobalHydra.instance().config_loader()).compose(job)

    assert composed(["seed=2"]).learner.eta == 1.0
    (folder / "learner" / "a.yaml").write_text("eta: 0.5\n")
    assert composed(["seed=2"]).learner.eta == 0.5
    assert composed(["seed=3"]).learner.eta == 0.5
    assert len(list(kept_folder().iterdir())) == 2  # one folder per version of the files
    for eta in (0.25, 0.125, 0.0625):
        (folder / "learner" / "a.yaml").write_text(f"eta: {eta}\n")
        assert composed(["seed=2"]).learner.eta == eta
    assert len(list(kept_folder().iterdir())) == 3  # the three newest versions are kept


def test_defaults_lists_with_interpolations_compose_as_hydra_composes(tmp_path, nothing_kept):
    """The map of known choices is built only for a defaults list that interpolates one (``${db}``), and there it
    resolves as Hydra's."""
    folder = tmp_path / "conf"
    for group in ("db", "server"):
        (folder / group).mkdir(parents=True)
    (folder / "config.yaml").write_text("defaults:\n  - db: mysql\n  - server: ${db}_server\n  - _self_\nseed: 0\n")
    (folder / "db" / "mysql.yaml").write_text("port: 3306\n")
    (folder / "db" / "sqlite.yaml").write_text("port: 0\n")
    (folder / "server" / "mysql_server.yaml").write_text("defaults:\n  - /db@replica: ${db}\nname: big\n")
    (folder / "server" / "sqlite_server.yaml").write_text("name: small\n")
    from hydra import initialize_config_dir

    with initialize_config_dir(config_dir=str(folder), version_base="1.3"):
        composer = Composer(GlobalHydra.instance().config_loader())
        for job in ([], ["db=sqlite"], ["seed=2"], ["db=sqlite", "seed=3"]):
            _same(composer.compose(job), compose("config", overrides=job))
        assert composer.compose(["db=sqlite"]).server.name == "small"
        assert composer.compose([]).server.replica.port == 3306


def test_a_damaged_kept_composition_is_composed_again(hydra_context, nothing_kept):
    Composer(hydra_context).compose(["learner=fogd"])
    for kept in kept_folder().glob("*/*.pkl"):
        kept.write_bytes(b"not a pickle")
    _same(Composer(hydra_context).compose(["learner=fogd"]), compose("config", overrides=["learner=fogd"]))


def test_without_a_home_compositions_are_composed_and_not_kept(hydra_context, monkeypatch):
    def no_home():
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr("okl.compose.Path.home", no_home)
    _same(Composer(hydra_context).compose(["learner=fogd"]), compose("config", overrides=["learner=fogd"]))


def test_interpolations_parsed_once_resolve_as_omegaconf_resolves(monkeypatch):
    """Within ``parsed_once`` each distinct interpolation string is parsed once, and every resolution is computed
    again (a resolver that counts its calls gives a new value each time), equal to OmegaConf's own."""
    import omegaconf.base

    from okl import interpolation

    parses = []
    original = omegaconf.base.parse

    def counting(*args):
        parses.append(args[0])
        return original(*args)

    monkeypatch.setattr(omegaconf.base, "parse", counting)
    monkeypatch.setattr(interpolation, "_parsed", {})
    calls = iter(range(100))
    OmegaConf.register_new_resolver("okl_test_count", lambda: next(calls), replace=True)
    cfg = OmegaConf.create(
        {"sigma": 2.0, "learner": {"sigma": "${sigma}", "n": "${okl_test_count:}"}, "x": "a${sigma}b"}
    )
    plain = OmegaConf.to_container(cfg, resolve=True)
    parses.clear()
    with interpolation.parsed_once():
        first = OmegaConf.to_container(cfg, resolve=True)
        second = OmegaConf.to_container(cfg, resolve=True)
    assert omegaconf.base.parse is counting  # the context restored the parser it found
    assert first == {**plain, "learner": {"sigma": 2.0, "n": 1}} and second["learner"]["n"] == 2
    assert plain["learner"]["n"] == 0 and sorted(parses) == sorted(set(parses))  # each string parsed once
    assert {"${sigma}", "${okl_test_count:}", "a${sigma}b"} <= set(parses)


def _same_resolved(cfg) -> None:
    """okl's resolution of ``cfg`` (:func:`okl.interpolation.resolved`) is OmegaConf's, types included."""
    from okl.interpolation import resolved

    theirs = OmegaConf.to_container(cfg, resolve=True)
    ours = resolved(cfg)
    assert ours == theirs and repr(ours) == repr(theirs)


def test_configs_resolve_as_omegaconf_resolves_them(monkeypatch):
    """Interpolations of top-level keys and ``oc.env`` (okl's shortcuts, the latter with defaults the grammar reads
    as strings or not, and with another resolver registered in its place), of other nodes, of a whole mapping,
    inside a string, chained, into a typed node (converted), escaped, other resolvers, missing and null values, and
    a config that is not the root; an interpolation that does not resolve is OmegaConf's error."""
    from okl.config import plan
    from okl.errors import ConfigError
    from okl.interpolation import resolved

    monkeypatch.setenv("OKL_TEST_ENV", "from the environment")

    @dataclass
    class Typed:
        sigma: float = "${n}"  # an int converted to a float
        name: str = "${n}"  # to a string
        d: Any = None
        seed: int = "${seed}"

    cfg = OmegaConf.create(
        {
            "n": 3,
            "seed": 1,
            "chained": "${n}",
            "missing": "???",
            "typed": Typed,
            "learner": {"sigma": "${n}", "eta": "${chained}", "lam": "${typed.sigma}", "tag": "a${n}b", "e": "\\${n}"},
            "copy": "${learner}",
            "env": "${oc.env:OKL_TEST_ENV}",
            "select": "${oc.select:learner.nothing,4}",
            "items": ["${seed}", {"x": "???"}, None, "${n}"],
            "none": None,
            "empty": {},
            "absent_mapping": "???",
            "late": "${later}",
            "later": "${seed}",
        }
    )
    cfg.typed.d = {"missing": "???", "seed": "${seed}"}
    OmegaConf.set_struct(cfg, True)
    for node in (cfg, cfg.learner, cfg.typed):
        _same_resolved(node)
    _same_resolved(OmegaConf.create({"learner": {"a": "${x}"}, "x": "${oc.env:OKL_TEST_ENV}"}))
    _same_resolved(OmegaConf.create([1, "${0}"]))
    words = ("results", "null", "NULL", "True", "false", "Inf", "nan", "nullx", "_x", "a-b", "'quoted'", "1", "${n}")
    env = OmegaConf.create({"n": 1, **{f"w{i}": f"${{oc.env:OKL_TEST_UNSET,{w}}}" for i, w in enumerate(words)}})
    env.merge_with({"set": "${oc.env:OKL_TEST_ENV,results}", "set_only": "${oc.env:OKL_TEST_ENV}"})
    monkeypatch.delenv("OKL_TEST_UNSET", raising=False)
    _same_resolved(env)
    with pytest.raises(Exception, match="OKL_TEST_UNSET"):
        resolved(OmegaConf.create({"root": "${oc.env:OKL_TEST_UNSET}"}))
    monkeypatch.setitem(BaseContainer._resolvers, "oc.env", BaseContainer._resolvers["oc.env"])
    OmegaConf.register_new_resolver("oc.env", lambda key, default=None: f"another {key}", replace=True)
    _same_resolved(env)  # a resolver registered in its place is called
    broken = OmegaConf.create({"learner": {"sigma": "${nowhere}"}, "dataset": {}, "comparator": {}})
    with pytest.raises(Exception, match="nowhere"):
        resolved(broken)
    with pytest.raises(ConfigError) as error:
        plan(broken)
    first = str(pytest.raises(OmegaConfBaseException, OmegaConf.to_container, broken, resolve=True).value)
    assert str(error.value) == f"cannot resolve the configuration: {first.splitlines()[0]}"


def test_every_run_of_every_preset_resolves_as_omegaconf_resolves_it():
    """The configs :meth:`Composer.compose_each` gives a preset's runs, resolved as ``okl.config.plan`` resolves
    them (the values a run's plan and id read)."""
    runs = [sweep.combinations(preset, []) for preset in PRESETS]
    with initialize_config_module(config_module="okl.conf", version_base="1.3"):
        composer = Composer(GlobalHydra.instance().config_loader())
        for combos in runs:
            for cfg in composer.compose_each(combos):
                _same_resolved(cfg)


def test_every_structure_of_every_preset_is_composed_by_okl_as_hydra_composes_it(nothing_kept):
    """okl's own defaults tree and merge (okl.defaults_tree) compose each distinct structure of every preset's sweep
    (262 of them), node for node as Hydra's loader composes it (with the file cache :class:`Composer` shares;
    ``test_compose_is_hydra_compose`` compares that loader with ``hydra.compose``)."""
    combos = [combo for preset in PRESETS for combo in sweep.combinations(preset, [])]
    with initialize_config_module(config_module="okl.conf", version_base="1.3"):
        composer = Composer(GlobalHydra.instance().config_loader())
        own = OwnComposer(composer._files().shared_repo("config"))
        structures = {}
        for combo in combos:
            parsed = composer._parse(combo)
            structures[tuple(o.input_line for o in parsed if not composer._is_value(o))] = parsed
        assert len(structures) > 250
        _same_structures(composer, own, structures)


def _same_structures(composer, own, structures) -> None:
    for structure, parsed in structures.items():
        ours = own.compose("config", [o for o in parsed if not composer._is_value(o)])
        assert ours is not None, structure  # composed here, not left to Hydra
        theirs = composer._files().load_configuration("config", list(structure), RunMode.RUN, from_shell=False)
        _same(pickle.loads(ours), _without_hydra(theirs))


def test_the_largest_presets_runs_are_hydras_resolved_values_included(nothing_kept):
    """Each structure of ``pros_n_kons_table1`` with one of its runs' seeds: the config ``hydra.compose`` makes, and
    the same values once resolved (the values a run's plan reads)."""
    combos = {tuple(c[:-1]): c for c in sweep.combinations("pros_n_kons_table1", [])}
    params = dict(sweep._sweep_params("pros_n_kons_table1"))
    assert len(combos) == len(params["dataset"].split(",")) * len(params["arm/pros_n_kons"].split(","))
    with initialize_config_module(config_module="okl.conf", version_base="1.3"):
        composer = Composer(GlobalHydra.instance().config_loader())
        for combo in combos.values():
            ours, theirs = composer.compose(combo), compose("config", overrides=combo)
            _same(ours, theirs)
            assert OmegaConf.to_container(ours, resolve=True) == OmegaConf.to_container(theirs, resolve=True)
