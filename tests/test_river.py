"""The river bridges: okl's learners as river estimators (okl.river), river's models and datasets inside
okl-run (learner=river, dataset=river), and the one-line error without the extra."""

import re
import sys
import warnings

import numpy as np
import pytest
from river import checks, datasets, evaluate, linear_model, metrics, neighbors, preprocessing

import okl.config as config
from helpers import only_run
from okl.errors import ConfigError
from okl.learners import LEARNERS
from okl.river import Classifier, MultiClassifier, Regressor
from okl.river.estimators import MEMORY_CHECK

ESTIMATORS = [
    Regressor("pkawv_taylor"),
    Regressor("pkrr_nystrom", sigma=2.0),
    Regressor("fogd"),  # no eta, no horizon: the anytime step
    Regressor("kons"),  # its memory grows by design: river's memory check is skipped
    Regressor("ewa"),  # its default experts
    Regressor("fsgd", sigma=50.0),  # multi_hinge by default: square here (it failed at the first sample)
    Classifier("fogd", eta=0.1),
    Classifier("fogd", eta=0.1, loss="logistic"),
    Classifier("pkawv_taylor"),
    Classifier("fsgd"),  # multi_hinge by default: hinge here
    Classifier("kernel_awv"),
    # σ at the scale of river's unscaled check data (ImageSegments' features reach the hundreds): with σ = 1 KOMP
    # keeps 2,085 of its 2,310 points, and the check was 20 s of O(M²) rounds; here 327, which bounds the memory
    MultiClassifier("polk", sigma=50.0),
    MultiClassifier("fsgd", loss="multi_logistic"),
    MultiClassifier("bsgd", budget=20),
]


@pytest.mark.parametrize("model", ESTIMATORS, ids=lambda m: f"{type(m).__name__}({m.learner})")
def test_river_estimator_checks_pass(model):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # river's emerging-features check: features outside the order
        checks.check_estimator(model)


def test_learners_whose_state_grows_skip_rivers_memory_check_and_the_docs_name_them():
    online = [n for n in LEARNERS.names() if LEARNERS.get(n).beforehand is None and n != "river"]
    growing = [n for n in online if LEARNERS.get(n)(1).grows]
    assert {"kernel_awv", "online_krr", "kons", "sketched_kons"} <= set(growing)
    for name in online:
        model = (Regressor if "regression" in LEARNERS.get(name).tasks else Classifier)(name)
        assert model._unit_test_skips() == ({MEMORY_CHECK} if name in growing else set()), name
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    (said,) = re.findall(r"river's memory check: ([^.]+)\.", readme)
    assert re.findall(r"`(\w+)`", said) == growing


def test_a_loss_that_does_not_fit_the_task_is_refused_when_the_estimator_is_made():
    """Regressor("fogd", loss="logistic") and Classifier("river") were accepted, then failed at the first sample."""
    for make, message in (
        (lambda: Regressor("fogd", loss="logistic"), "loss 'logistic' is a loss of labels, and the stream is a regr"),
        (lambda: Classifier("river"), "is not a classifier, and binary datasets need one"),
        (lambda: Regressor(features="time"), "features takes the list of feature keys, got 'time': features=['time']"),
        (lambda: Regressor(features=[]), "features=[] names no feature"),
    ):
        with pytest.raises(ConfigError, match=re.escape(message)):
            make()


def test_probabilities_follow_the_loss_of_an_ensembles_experts():
    """Classifier("ewa", experts=[hinge fsgd]) gave "probabilities" (1 + f)/2 from ewa's own square loss (LogLoss 1.197
    on Phishing, worse than a coin); a logistic expert's score is a log-odds."""
    x = {"a": 1.0}
    hinge = Classifier("ewa", experts=[{"name": "fsgd", "loss": "hinge"}])
    hinge.learn_one(x, True)
    with pytest.raises(NotImplementedError, match="the hinge loss has no probabilities"):
        hinge.predict_proba_one(x)
    logistic = Classifier("ewa", experts=[{"name": "fogd", "loss": "logistic", "eta": 0.5}])
    logistic.learn_one(x, True)
    f = logistic._score(x)
    assert logistic.predict_proba_one(x)[True] == pytest.approx(1 / (1 + np.exp(-f)))
    mixed = Classifier("ewa", experts=[{"name": "fogd", "loss": "logistic"}, {"name": "fogd", "loss": "square"}])
    mixed.learn_one(x, True)
    with pytest.raises(NotImplementedError, match="experts of several losses"):
        mixed.predict_proba_one(x)


def test_a_missing_value_and_odd_keys_are_said_by_feature():
    """None (river's missing value) was "nan at index 0"; tuple keys of mixed types were a TypeError at the first
    sample; a refused sample registered its label as a class, and predict_proba_one before any feature crashed."""
    model = Regressor("fogd")
    model.learn_one({"a": 1.0, "b": 2.0}, 1.0)
    with pytest.raises(ConfigError, match=r"^feature 'a' is None \(a missing value\): impute it first"):
        model.predict_one({"a": None, "b": 2.0})
    mixed = Regressor("fogd")
    mixed.learn_one({(1, "a"): 1.0, (1, 2): 2.0}, 1.0)
    assert set(mixed._order) == {(1, "a"), (1, 2)}
    classes = MultiClassifier("fsgd", loss="multi_logistic")
    with pytest.raises(ValueError, match="non-finite input"):
        classes.learn_one({"a": float("nan")}, "z")
    assert classes._labels == []
    classes.learn_one({}, "x")  # no feature: nothing to learn from, the label is known
    assert classes.predict_proba_one({}) == {"x": 1.0} and classes.predict_one({}) == "x"


def test_a_gradient_learner_learns_without_a_step_or_a_horizon():
    """Regressor("fogd") asked for learner.eta at its first sample; it now steps with η_t = 1/√t."""
    stream = list(datasets.synth.Friedman(seed=3).take(400))
    model = Regressor("fogd", sigma=3.0)
    mae = evaluate.progressive_val_score(stream, model, metrics.MAE()).get()
    mean = np.mean([y for _, y in stream])
    assert mae < np.mean([abs(y - mean) for _, y in stream])
    assert model._okl.eta.t == 400 and model._okl.eta.constant is None


def test_errors_name_pythons_keywords_not_okl_runs_keys():
    with pytest.raises(ConfigError) as info:  # when the estimator is made (it was at the first sample)
        Classifier("fsgd", loss="multi_hinge")
    assert str(info.value) == "fsgd: loss=multi_hinge does not fit binary datasets; set loss=square, hinge or logistic"
    # horizon=-1 ended in "math domain error" at the first sample and 0 was taken; y=None in a bare TypeError
    for horizon in (-1, 0, 2.5):
        with pytest.raises(ConfigError, match=rf"^horizon must be an integer >= 1 \(got {horizon}\)$"):
            Regressor("fogd", horizon=horizon)
    with pytest.raises(ValueError, match=r"^okl.river: learn_one takes a number as y \(got None\)$"):
        Regressor("fogd", horizon=10).learn_one({"a": 1.0}, None)


def test_a_feature_outside_the_order_warns_once_with_the_fix():
    model = Regressor("pkawv_taylor")
    model.learn_one({"a": 1.0}, 1.0)
    with pytest.warns(UserWarning, match=r"features 'b' are not in .* pass features=\[\.\.\.\] with every feature"):
        model.learn_one({"a": 1.0, "b": 2.0}, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.predict_one({"a": 1.0, "c": 2.0})  # once only
    given = Regressor("pkawv_taylor", features=["a", "b"])
    given.learn_one({"a": 1.0, "b": 2.0}, 1.0)
    assert given._okl.d == 2


def test_ewa_has_okl_runs_default_experts(composed):
    from okl.learners.ensembles.ewa import DEFAULT_EXPERTS

    experts = config.plan(composed("learner=ewa", "n=10")).learner.params.experts
    assert [dict(e) for e in experts] == [dict(e) for e in DEFAULT_EXPERTS]
    assert Regressor("ewa")._settings == {} and LEARNERS.get("ewa")(2).params.experts == DEFAULT_EXPERTS


def test_multiclassifier_is_okl_run_on_rivers_multiclass_stream(okl_run, results_root):
    """ImageSegments' 7 named classes, numbered as they come by both: the same learner gives the same classes
    either way, and learns."""
    stream = list(datasets.ImageSegments())
    river_side = _predictions(MultiClassifier("fsgd", sigma=50.0, eta=0.5), stream, metrics.Accuracy())
    code, _, err = okl_run(
        "dataset=river", "dataset.stream=datasets.ImageSegments", "learner=fsgd", "learner.sigma=50", "learner.eta=0.5"
    )
    assert code == 0, err
    run = only_run(results_root, learner="fsgd")
    classes = list(dict.fromkeys(y for _, y in stream))
    ours = [classes[int(c)] for c in run.rounds()["y_hat"].to_numpy()]
    first_label = stream[0][1]  # before any label, MultiClassifier has no class and okl-run predicts class 0
    assert river_side[0] is None or river_side[0] == first_label
    assert [str(c) for c in river_side[1:]] == ours[1:]
    assert run.manifest().average_loss < 0.5


def test_multiclassifier_probabilities_are_the_softmax_of_the_class_scores():
    model = MultiClassifier("fsgd", loss="multi_logistic", sigma=1.0, eta=0.5)
    for x, y in datasets.ImageSegments().take(60):
        model.learn_one(x, y)
    proba = model.predict_proba_one(x)
    scores = model._okl.activations(model._vector(x)[None, :])[0]
    expected = np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()
    np.testing.assert_allclose([proba[label] for label in model._labels], expected, rtol=1e-12)
    assert model.predict_one(x) == model._labels[int(np.argmax(scores))]
    with pytest.raises(NotImplementedError, match="multi_hinge"):
        MultiClassifier("fsgd").predict_proba_one(x)
    with pytest.raises(ConfigError, match="loss=hinge does not fit multiclass datasets; set loss=multi_hinge or"):
        MultiClassifier("fsgd", loss="hinge")


def _predictions(model, dataset, metric):
    steps = evaluate.iter_progressive_val_score(dataset, model, metric, step=1, yield_predictions=True)
    return np.array([step["Prediction"] for step in steps])


def test_progressive_validation_equals_okl_run_on_the_same_stream(okl_run, results_root):
    """River's progressive validation (predict, then learn, sample by sample) is okl's online protocol: the same
    learner gives the same predictions as okl-run on the river dataset, per round and in blocks."""
    friedman = list(datasets.synth.Friedman(seed=1).take(600))
    river_side = _predictions(Regressor("pkawv_taylor", M=3, sigma=0.8, lam=0.1), friedman, metrics.MSE())
    stream = [
        "dataset=river",
        "dataset.stream=datasets.synth.Friedman",
        "dataset.params={seed: 1}",
        "dataset.length=600",
    ]
    for block in (1, 256):
        code, _, err = okl_run(*stream, "learner=pkawv_taylor", "M=3", "sigma=0.8", "lam=0.1", f"block={block}")
        assert code == 0, err
        y_hat = only_run(results_root, learner="pkawv_taylor", dataset="river").rounds()["y_hat"].to_numpy()
        np.testing.assert_allclose(y_hat, river_side, rtol=1e-9, atol=1e-9)
        assert np.abs(river_side).max() > 1  # it learned something: the predictions are not all 0
        mse = evaluate.progressive_val_score(
            friedman, Regressor("pkawv_taylor", M=3, sigma=0.8, lam=0.1), metrics.MSE()
        )
        run = only_run(results_root, learner="pkawv_taylor", dataset="river").manifest()
        assert run.average_loss == pytest.approx(mse.get(), rel=1e-9)  # river's metric is okl's average loss
        results_root.joinpath("learner=pkawv_taylor").rename(results_root / f"block{block}")


def test_classifier_labels_equal_the_sign_of_okl_runs_scores(okl_run, results_root):
    river_side = _predictions(
        Classifier("fogd", eta=0.2, D=50, sigma=1.0, seed=3), datasets.Phishing(), metrics.Accuracy()
    )
    code, _, err = okl_run(
        "dataset=river", "dataset.stream=datasets.Phishing", "learner=fogd", "learner.D=50", "learner.eta=0.2", "seed=3"
    )
    assert code == 0, err
    y_hat = only_run(results_root, learner="fogd").rounds()["y_hat"].to_numpy()
    np.testing.assert_array_equal(river_side, y_hat > 0)
    assert 0.2 < river_side.mean() < 0.8


def test_estimators_compose_in_pipelines_and_learn():
    model = preprocessing.StandardScaler() | Regressor("pkawv_taylor", M=2, sigma=2.0)
    scaled = evaluate.progressive_val_score(datasets.TrumpApproval(), model, metrics.MAE()).get()
    constant = evaluate.progressive_val_score(
        datasets.TrumpApproval(), Regressor("pkawv_taylor", lam=1e9), metrics.MAE()
    ).get()
    assert scaled < constant / 5


def test_feature_order_is_given_or_the_first_samples_sorted_keys():
    given = Regressor("pkawv_taylor", features=["b", "a"])
    given.learn_one({"a": 1.0, "b": 2.0}, 1.0)
    assert given._order == ("b", "a")
    found = Regressor("pkawv_taylor")
    found.learn_one({"b": 2.0, "a": 1.0, "c": 3.0}, 1.0)
    assert found._order == ("a", "b", "c")
    with pytest.warns(UserWarning, match="'z'"):
        found.learn_one({"a": 1.0, "z": 9.0}, 1.0)  # absent features are 0, new ones ignored
    assert found._okl.d == 3


def test_classifier_probabilities_follow_the_learners_loss():
    x = {"u": 0.3}
    square = Classifier("pkawv_taylor", lam=0.1)
    logistic = Classifier("fogd", eta=0.5, loss="logistic")
    for model in (square, logistic):
        for _ in range(20):
            model.learn_one(x, True)
    f_square, f_logistic = square._score(x), logistic._score(x)
    assert square.predict_proba_one(x)[True] == pytest.approx(min(1.0, (1 + f_square) / 2))
    assert logistic.predict_proba_one(x)[True] == pytest.approx(1 / (1 + np.exp(-f_logistic)))
    with pytest.raises(NotImplementedError, match="hinge"):
        Classifier("fogd", eta=0.5, loss="hinge").predict_proba_one(x)


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: Regressor("nope"), "unknown learner 'nope'"),
        (lambda: Regressor("pkawv_taylor", M=0), "M must be an integer >= 1"),
        (lambda: Regressor("pkawv_taylor", colour=1), "unknown key colour= for learner .pkawv_taylor.; its keys"),
        (lambda: Classifier("polk"), None),
        (lambda: Regressor("kors_batch"), "before round 1"),
    ],
)
def test_bad_estimators_fail_at_construction_with_one_line(make, match):
    if match is None:  # polk learns regression, binary and multiclass: it builds
        make()
        return
    with pytest.raises(ConfigError, match=match) as info:
        make()
    assert "\n" not in str(info.value)


def test_an_error_while_learning_names_the_python_keyword(monkeypatch):
    """An okl error raised inside learn_one (a memory advice, a step size) reaches a river user in the keywords of
    the Python call: ``learner.budget`` becomes ``budget=``."""
    model = Regressor("pkrr_nystrom", sigma=1.0)
    model.learn_one({"a": 1.0}, 0.5)

    def fails(x, y):
        raise ValueError("pkrr_nystrom: too many rounds; set learner.budget or a larger learner.lam")

    monkeypatch.setattr(model._okl, "learn_one", fails)
    with pytest.raises(ValueError, match=r"^pkrr_nystrom: too many rounds; set budget= or a larger lam=$"):
        model.learn_one({"a": 2.0}, 0.5)


def test_classifier_refuses_labels_that_are_not_binary():
    with pytest.raises(ValueError, match="True/False"):
        Classifier("fogd", eta=0.1).learn_one({"a": 1.0}, -1)


def test_river_model_inside_okl_run_is_the_river_model_on_the_same_stream(okl_run, results_root, composed, mirror):
    overrides = [
        "dataset=casp",
        "learner=river",
        "learner.model=neighbors.KNNRegressor",
        "learner.params={n_neighbors: 3}",
        "n=400",
    ]
    code, out, err = okl_run(*overrides)
    assert code == 0, err
    run = only_run(results_root, learner="river", dataset="casp")
    plan = config.plan(composed(*overrides))
    X, y = next(plan.stream(400))
    knn = neighbors.KNNRegressor(n_neighbors=3)
    expected = []
    for x_t, y_t in zip(X, y, strict=True):
        expected.append(knn.predict_one(dict(enumerate(x_t))))
        knn.learn_one(dict(enumerate(x_t)), y_t)
    np.testing.assert_allclose(run.rounds()["y_hat"], expected, rtol=1e-12)
    manifest = run.manifest()
    assert manifest.report["memory_bytes"] > 0 and manifest.learner_s > 0


def test_river_classifier_scores_binary_streams(composed):
    plan = config.plan(
        composed(
            "dataset=synthetic",
            "dataset.task=binary",
            "dataset.d=2",
            "learner=river",
            "learner.model=linear_model.LogisticRegression",
            "n=50",
        )
    )
    X, y = next(plan.stream(50))
    reference = linear_model.LogisticRegression()
    for x_t, y_t in zip(X, y, strict=True):
        proba = reference.predict_proba_one(dict(enumerate(x_t)))
        assert plan.learner.predict_one(x_t) == pytest.approx(proba[True] - proba[False])
        plan.learner.learn_one(x_t, y_t)
        reference.learn_one(dict(enumerate(x_t)), y_t > 0)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["learner.model=neighbors.KNN"], "river.neighbors has no 'KNN'; it has: KNNClassifier, KNNRegressor"),
        (["learner.model=nope.KNN"], "river has no module 'nope'"),
        (["learner.model=KNN"], "not a dotted path under river.: e.g. neighbors.KNNRegressor"),
        (["dataset=river", "dataset.stream=datasets"], "not a dotted path under river.: e.g. datasets.TrumpApproval"),
        (["learner.params=[1, 2]"], "params must be a mapping of linear_model.LinearRegression's arguments by name"),
        (  # "river.okl.river.Regressor ... river's documentation of okl.river.Regressor"
            ["learner.model=okl.river.Regressor", "learner.params={learner: fsgd, loss: hinge}"],
            "learner.params: okl.river.Regressor rejects {'learner': 'fsgd', 'loss': 'hinge'}: learner 'fsgd': loss "
            "'hinge' is a loss of labels",
        ),
        (["learner.model=preprocessing.StandardScaler"], "not a river regressor or classifier"),
        (["learner.params={k: 5}"], "learner.params: river.linear_model.LinearRegression rejects {'k': 5}"),
        (["dataset.task=binary"], "learner.model linear_model.LinearRegression is not a classifier"),
        (["dataset=river", "dataset.stream=datasets.ImageSegments"], "is not a classifier, and multiclass datasets"),
        (["dataset=river", "dataset.stream=datasets.synth.Friedman"], "has no end: set dataset.length"),
        (  # an internal ValueError at round 2: river checks it when it first predicts
            ["learner.model=neighbors.KNNRegressor", "learner.params={n_neighbors: 0}"],
            "learner.params: river.neighbors.KNNRegressor with {'n_neighbors': 0} fails on its first rounds "
            "(ValueError: ",
        ),
        (
            ["learner.params={optimizer: 3}"],
            "river.linear_model.LinearRegression with {'optimizer': 3} fails on its first rounds (AttributeError: ",
        ),
    ],
)
def test_river_config_errors_are_one_line(composed, overrides, message):
    with pytest.raises(ConfigError, match=None) as info:
        config.plan(composed("learner=river", "n=10", *overrides))
    assert message in str(info.value) and "\n" not in str(info.value)


def test_without_river_the_error_says_how_to_install_it(okl_run, monkeypatch):
    for name in [m for m in sys.modules if m == "river" or m.startswith("river.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "river", None)  # import river raises ImportError
    code, _, err = okl_run("learner=river", "n=10")
    assert code == 2
    assert err.strip().endswith("river is not installed: pip install 'okl[river]' (or pip install 'river>=0.26,<0.27')")
    code, _, err = okl_run("dataset=river", "n=10")
    assert code == 2 and "pip install 'okl[river]'" in err


def test_the_bench_presets_play_okl_and_river_on_the_same_streams(okl_run, results_root, mirror):
    from okl import results

    for preset in ("bench_river_casp", "bench_river_binary"):
        code, _, err = okl_run("-m", f"experiment={preset}", "n=60", "progress=false")
        assert code == 0, err
    runs = results.runs(results_root)
    assert len(runs) == 5 + 2 * 6 and (runs.status == "complete").all()
    river = runs[runs.learner == "river"].groupby("dataset")["learner.model"].apply(set).to_dict()
    assert river == {
        "casp": {"neighbors.KNNRegressor", "tree.HoeffdingTreeRegressor", "linear_model.LinearRegression"},
        "cod_rna": {"neighbors.KNNClassifier", "tree.HoeffdingTreeClassifier", "linear_model.LogisticRegression"},
        "ijcnn1": {"neighbors.KNNClassifier", "tree.HoeffdingTreeClassifier", "linear_model.LogisticRegression"},
    }
    for dataset, rounds in results.load(results_root, columns=["t", "y"]).groupby("dataset"):
        ys = rounds.pivot(index="t", columns="run", values="y")  # every learner saw the same labels
        assert (ys.nunique(axis=1) == 1).all(), dataset


def test_the_core_does_not_import_the_extras():
    import subprocess

    code = "import sys, okl.config, okl.results, okl.cli.run; print(sorted({'river', 'optuna'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_river_model_with_a_seed_gets_the_runs_seed_and_repeats_its_rounds(okl_run, results_root, composed):
    overrides = ["learner=river", "learner.model=forest.ARFRegressor", "learner.params={n_models: 2}", "n=150"]
    assert config.plan(composed(*overrides, "seed=7")).learner.model.seed == 7
    own = [*overrides[:2], "learner.params={n_models: 2, seed: 3}", "seed=7"]
    assert config.plan(composed(*own)).learner.model.seed == 3
    code, _, err = okl_run(*overrides, "seed=7")
    assert code == 0, err
    first = only_run(results_root, learner="river").rounds()["y_hat"].to_numpy()
    code, _, err = okl_run(*overrides, "seed=7", "sink.overwrite=true")
    assert code == 0, err
    np.testing.assert_array_equal(only_run(results_root, learner="river").rounds()["y_hat"].to_numpy(), first)


def test_the_readmes_river_example_compares_in_the_same_pipeline_and_learns():
    """The README's example: okl and river's linear regression in the same pipeline (scalers included), okl
    ahead on Friedman; binary and multi-class classifiers well above chance."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    (block,) = [b.split("```")[0] for b in readme.split("```python\n")[1:] if "okl.river" in b]
    namespace = {}
    exec(block, namespace)
    okl_mae, river_mae = namespace["okl_mae"].get(), namespace["river_mae"].get()
    assert "scaled(linear_model.LinearRegression())" in block and okl_mae < river_mae
    majority = max(np.mean([y for _, y in datasets.Phishing()]), 1 - np.mean([y for _, y in datasets.Phishing()]))
    assert namespace["accuracy"].get() > majority + 0.2
    assert namespace["classes"].get() > 1 / 7 + 0.5  # seven balanced classes


def test_okl_in_rivers_pipeline_inside_okl_run_is_rivers_progressive_validation(okl_run, results_root):
    """learner=river with okl.river.Regressor and standardize=true is the river user's pipeline, round by round."""
    stream = list(datasets.TrumpApproval().take(300))
    pipeline = preprocessing.StandardScaler() | preprocessing.TargetStandardScaler(
        Regressor("pkawv_taylor", M=3, sigma=2.0, lam=0.1)
    )
    river_side = _predictions(pipeline, stream, metrics.MAE()).astype(float)
    code, _, err = okl_run(
        "dataset=river",
        "dataset.length=300",
        "learner=river",
        "learner.model=okl.river.Regressor",
        "learner.params={learner: pkawv_taylor, M: 3, sigma: 2.0, lam: 0.1}",
        "learner.standardize=true",
    )
    assert code == 0, err
    np.testing.assert_allclose(only_run(results_root, learner="river").rounds()["y_hat"], river_side, rtol=1e-12)
    with pytest.raises(ConfigError, match="okl.river has Classifier, MultiClassifier, Regressor"):
        LEARNERS.get("river")(2, model="okl.river.Nope")


def test_the_bundled_bench_presets_play_both_sides_in_the_same_pipeline(okl_run, results_root):
    from okl import results

    for preset in ("bench_river_bundled", "bench_river_bundled_binary"):
        code, _, err = okl_run("-m", f"experiment={preset}", "dataset.length=80", "progress=false")
        assert code == 0, err
    runs = results.runs(results_root)
    assert len(runs) == 6 * 3 + 6 * 2 and (runs.status == "complete").all() and runs["learner.standardize"].all()
    okl_side = runs[runs["learner.model"].str.startswith("okl.river.")]
    assert len(okl_side) == 2 * 3 + 2 * 2
    rounds = results.load(results_root, columns=["t", "y"]).merge(runs[["run", "dataset.stream"]], on="run")
    for stream, played in rounds.groupby("dataset.stream"):
        ys = played.pivot(index="t", columns="run", values="y")  # every arm saw the same labels
        assert ys.shape[1] == 6 and (ys.nunique(axis=1) == 1).all(), stream


def test_a_regressor_of_a_label_loss_is_refused_when_made_and_fsgd_defaults_to_the_square_loss():
    """Regressor("fsgd") (multi_hinge by default) raised the loss error at the first sample and then took the next
    ones, truncating targets to classes; with the loss given it is refused when made, in Python's words, and by
    default it learns the square loss."""
    with pytest.raises(ConfigError, match=r"set loss=square"):
        Regressor("fsgd", loss="multi_hinge")
    model = Regressor("fsgd", sigma=0.5, eta=0.5)
    for y in (0.5, 0.5, -0.37):
        model.learn_one({"a": 1.0}, y)
    assert model._okl.params.loss == "square" and model.predict_one({"a": 1.0}) != 0.0


def test_a_classifier_whose_loss_the_task_sets_has_its_probabilities():
    """dual_sgd's loss is set by the task (logistic on binary labels): its Classifier gives the logistic's
    probabilities where it raised "the None loss has no probabilities"."""
    model = Classifier("dual_sgd")
    x = {"u": 0.3}
    for _ in range(20):
        model.learn_one(x, True)
    assert model.predict_proba_one(x)[True] == pytest.approx(1 / (1 + np.exp(-model._score(x))))


def test_a_files_rows_feed_rivers_and_okls_classifiers(tmp_path, no_data):
    """iter_file gave a binary file's labels as okl's ±1, which okl.river.Classifier refused (advising
    MultiClassifier): they come as river's True/False, the larger label True."""
    from okl.datasets import iter_file

    path = tmp_path / "labels.csv"
    rows = np.random.default_rng(1).uniform(size=(50, 2))
    path.write_text("a,b,y\n" + "".join(f"{a},{b},{int(a > 0.5)}\n" for a, b in rows))
    got = list(iter_file(path, target="y"))
    assert [y for _, y in got] == [bool(a > 0.5) for a, _ in rows]
    model = Classifier("fogd", eta=0.5)
    for x, y in got:
        model.learn_one(x, y)


@pytest.mark.parametrize("label", [float("nan"), None])
def test_a_multiclassifier_refuses_a_missing_label_and_registers_no_class(label):
    """Each NaN label had become a class of its own (NaN != NaN): predict_one could answer nan and the probabilities
    spread over the phantom classes."""
    model = MultiClassifier("fsgd")
    model.learn_one({"a": 1.0}, "cat")
    with pytest.raises(ValueError, match=r"^okl.river.MultiClassifier: learn_one got a missing label .*: drop the"):
        model.learn_one({"a": 0.0}, label)
    assert model._labels == ["cat"] and model.predict_one({"a": 0.0}) == "cat"


@pytest.mark.parametrize("value", [np.array([1.0, 2.0]), np.array([1.0])])
def test_an_array_as_a_feature_value_is_named_as_not_a_number(value):
    """A numpy array as a value was numpy's "truth value of an array ... is ambiguous" (the check for None compared
    every value with ==)."""
    model = Regressor("fogd")
    model.learn_one({"a": 1.0, "b": 2.0}, 1.0)
    with pytest.raises(ConfigError, match=r"^feature 'b' is array\(\[.*not a number: encode it first"):
        model.learn_one({"a": 1.0, "b": value}, 1.0)
