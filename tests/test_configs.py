"""Shipped configs: every YAML instantiates its registered class under its own name; interpolation."""

from pathlib import Path

import numpy as np
import pytest

import okl.config as config
from okl.datasets import DATASETS
from okl.errors import ConfigError
from okl.learners import LEARNERS

CONF = Path(config.__file__).resolve().parents[1] / "conf"


@pytest.mark.parametrize(("group", "registry"), [("learner", LEARNERS), ("dataset", DATASETS)])
def test_yaml_files_and_registry_keys_match(group, registry):
    assert sorted(p.stem for p in (CONF / group).glob("*.yaml")) == registry.names()


MULTICLASS_DEFAULTS = {"fsgd", "polk", "bsgd"}  # their shipped configs are POLK §5's multi-class tasks


@pytest.mark.parametrize("name", LEARNERS.names())
def test_every_learner_yaml_instantiates(composed, name):
    dataset = "multidist" if name in MULTICLASS_DEFAULTS else "synthetic"
    plan = config.plan(composed(f"learner={name}", f"dataset={dataset}", "n=100"))
    assert type(plan.learner) is LEARNERS.get(name)
    assert plan.learner.name == name == plan.config["learner"]["name"]


@pytest.mark.parametrize("name", DATASETS.names())
def test_every_dataset_yaml_plans_without_reading_data(composed, name, no_data):
    """Planning (the run id, a sweep's expansion) needs the catalog only: no file is read or downloaded."""
    extra = ["dataset.positive=[0]"] if name == "mnist" else []  # the shipped learners handle ±1 labels
    if name == "replay":  # needs a recorded run (tests/test_environments.py): without one, a one-line error
        with pytest.raises(ConfigError, match="dataset.run"):
            config.plan(composed("dataset=replay", "learner=fogd"))
        return
    if name == "file":  # the user's file, read once into the cache to plan (tests/test_user_file.py)
        with pytest.raises(ConfigError, match="dataset=file needs the file: dataset.path="):
            config.plan(composed("dataset=file", "learner=fogd"))
        return
    learner = ["learner=polk"] if name.startswith("multidist") else ["learner=fogd", "learner.D=10"]
    plan = config.plan(composed(f"dataset={name}", *learner, "n=100", *extra))
    assert type(plan.dataset) is DATASETS.get(name) and plan.dataset.name == name
    assert plan.rounds == min(100, plan.dataset.n) and not no_data.exists()


def test_top_level_keys_reach_learners_and_can_be_overridden_per_learner(composed):
    plan = config.plan(composed("M=3", "sigma=2.5", "lam=0.1"))
    assert (plan.learner.params.M, plan.learner.params.sigma, plan.learner.params.lam) == (3, 2.5, 0.1)
    plan = config.plan(composed("M=3", "learner.M=4"))
    assert plan.learner.params.M == 4
    assert plan.config["M"] == 3


@pytest.mark.parametrize(
    "learner", ["pros_n_kons", "con_kons", "b_kons", "kors_batch", "pkrr_nystrom", "sketched_kons"]
)
def test_top_level_kors_reaches_every_dictionary_learner(composed, learner):
    assert config.plan(composed(f"learner={learner}")).learner.kors.power == 1  # Eq. 4 by default
    assert config.plan(composed(f"learner={learner}", "kors=code")).learner.kors.power == 2


@pytest.mark.parametrize(
    ("preset", "group"), [("pros_n_kons_table1", "pros_n_kons"), ("pros_n_kons_table2", "pros_n_kons_binary")]
)
def test_pros_n_kons_presets_use_the_settings_that_reproduce_the_tables(composed, preset, group):
    """σ = 4 on [0, 1] inputs and the authors' KORS weights (the artefacts explain why), which a run
    can still override."""
    cfg = composed(f"experiment={preset}", f"arm/{group}=pros_n_kons")
    assert (cfg.sigma, cfg.learner.sigma, cfg.learner.kors, cfg.dataset.preset) == (4.0, 4.0, "code", "pros_n_kons")
    assert composed(f"experiment={preset}", "sigma=8", "kors=eq4").learner.kors == "eq4"


def test_pros_n_kons_arms_hold_each_learners_own_keys(composed):
    """Table 2: the KONS family with the hinge at C = 10, η = 0.1 and α = γ ∈ {0.01, 1}; BATCH by least squares
    (its ablation with the squared hinge); FOGD with 400 features."""
    arm = lambda name: config.plan(composed("experiment=pros_n_kons_table2", f"arm/pros_n_kons_binary={name}"))  # noqa: E731
    p = arm("con_kons_alpha1").learner.params
    assert (p.alpha, p.gamma, p.loss, p.C, p.eta) == (1.0, 1.0, "hinge", 10.0, 0.1)
    assert arm("b_kons").learner.params.alpha == 0.01 and arm("kors_batch").learner.params.loss == "square"
    assert arm("kors_batch_squared_hinge").learner.params.loss == "squared_hinge"
    assert (arm("fogd").learner.params.D, arm("fogd").learner.params.loss) == (200, "hinge")


def test_seed_reaches_stream_and_learner(composed):
    plan = config.plan(composed("learner=fogd", "seed=7"))
    assert plan.dataset.params.seed == 7 and plan.learner.params.seed == 7


def test_run_id_depends_on_what_determines_the_rounds_only(composed):
    base = config.plan(composed()).run_id
    assert config.plan(composed("block=8", "timeout_s=5", "progress=false")).run_id == base
    assert config.plan(composed("learner.M=2")).run_id == base  # the default, spelled out
    assert config.plan(composed("M=3")).run_id != base
    assert config.plan(composed("seed=1")).run_id != base
    assert config.plan(composed("n=10")).run_id != base
    assert (
        config.plan(composed("learner=online_krr", "M=5", "n=1000")).run_id
        == config.plan(composed("learner=online_krr", "n=1000")).run_id
    )


def test_a_learner_revised_since_a_run_gives_another_run_id(composed, monkeypatch):
    """A fix that changes a learner's numbers at the same settings (fsgd and polk, revision 1: a block's rounds see
    only the classes of the labels before them; 2: their penalty column) must not leave its earlier runs to be
    reused as if they were this code's: the revision enters the run id and the identity (okl-results tells the runs
    apart); 0 leaves both as they were."""
    from okl.learners.random_features.fogd import FOGD

    plan = config.plan(composed("learner=fogd"))
    assert "revision" not in plan.identity["learner"]
    monkeypatch.setattr(FOGD, "revision", 2)
    revised = config.plan(composed("learner=fogd"))
    assert revised.run_id != plan.run_id and revised.identity["learner"]["revision"] == 2
    assert config.plan(composed("learner=polk", "dataset=multidist")).identity["learner"]["revision"] == 2


def test_a_reading_whose_numbers_depend_on_the_blocks_is_identified_by_its_block(composed):
    """CON-KONS's carry: singular is ill-conditioned: its numbers change with the grouping of rounds into blocks
    (beyond roundoff), so its run is identified by ``block`` too; a learner exact in blocks keeps one run id."""
    ids = {
        (carry, block): config.plan(composed("learner=con_kons", f"learner.carry={carry}", f"block={block}")).run_id
        for carry in ("singular", "alpha")
        for block in (1, 256)
    }
    assert ids["singular", 1] != ids["singular", 256] and ids["alpha", 1] == ids["alpha", 256]
    learner = config.plan(composed("learner=con_kons", "learner.carry=singular", "n=200")).learner
    X = np.random.default_rng(0).uniform(-1, 1, (200, learner.d))
    y = np.sin(3 * X[:, 0])
    blocks = learner.predict_learn_block(X, y)
    fresh = config.plan(composed("learner=con_kons", "learner.carry=singular", "n=200")).learner
    rounds = np.array([fresh.predict_learn_block(X[t : t + 1], y[t : t + 1])[0] for t in range(200)])
    assert np.abs(rounds - blocks).max() > 1e-3 * np.abs(blocks).max()  # why: the grouping changes the numbers


def test_n_is_capped_by_the_stream(composed):
    assert config.plan(composed("dataset.length=500", "n=1000")).rounds == 500
    assert config.plan(composed("dataset.length=500")).rounds == 500


def test_slurm_launcher_config_extends_submitit_with_one_core_per_run(composed):
    launcher = composed("hydra/launcher=slurm", hydra=True).hydra.launcher
    assert launcher._target_ == "hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher"
    assert launcher.cpus_per_task == 1 and "OPENBLAS_NUM_THREADS=1" in launcher.setup[0]


@pytest.mark.parametrize("arm", ["raker", "omkl", "rbf_01", "raker_code"])
def test_raker_figure_preset_uses_the_papers_settings(composed, arm):
    plan = config.plan(composed("experiment=raker_fig1_synthetic", f"arm/raker={arm}"))
    assert (plan.dataset.params.changes, plan.dataset.n) == (3, 20000)
    p = plan.learner.params
    if arm == "rbf_01":  # η = 1/√T, σ² = 0.1
        assert p.eta is None and plan.learner.eta.constant == pytest.approx(20000**-0.5)
        assert p.sigma**2 == pytest.approx(0.1)
    elif arm == "raker_code":
        assert p.variant == "code"
    else:  # §4: σ² ∈ {0.1, 1, 10}, η = 0.5, λ = 0.01
        assert (tuple(p.sigma2), p.eta, p.lam) == ((0.1, 1.0, 10.0), 0.5, 0.01)


@pytest.mark.parametrize(
    ("arm", "expected"),
    [
        ("ksvm_K1e-4", dict(eta=6.0, batch=32, lam=1e-6, loss="multi_hinge", K=1e-4)),
        ("klr_K0.03", dict(eta=6.0, batch=32, lam=1e-6, loss="multi_logistic", K=0.03)),
        ("bsgd_B129", dict(eta=1.0, lam=1e-6, loss="multi_hinge", maintenance="merging", budget=129)),
    ],
)
def test_polk_arms_use_the_papers_multidist_settings(composed, arm, expected):
    """polk_koppel2019 §5.3: σ̃² = 0.6 on multidist, with each learner's step, batch and λ."""
    plan = config.plan(composed("experiment=polk_table2_multidist", f"arm/polk_multidist={arm}"))
    assert plan.dataset.name == "multidist" and plan.learner.params.sigma**2 == pytest.approx(0.6)
    assert {k: getattr(plan.learner.params, k) for k in expected} == expected
