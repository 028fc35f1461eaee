"""okl's compiled functions are cached under a stamp of every okl file holding compiled code (okl.jit)."""

import importlib
import os
import pkgutil

from numba.core.registry import CPUDispatcher

import okl
from okl import jit


def compiled_functions():
    """Every numba function defined in an okl module (each module imported)."""
    found = {}
    for info in pkgutil.walk_packages(okl.__path__, "okl."):
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional extra (river, optuna, mlflow) absent
            continue
        for name, obj in vars(module).items():
            if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == info.name:
                found[f"{info.name}.{name}"] = obj
    return found


def test_every_compiled_function_of_okl_is_cached_under_the_package_stamp():
    functions = compiled_functions()
    assert len(functions) > 40  # the kernel row, KOMP, KORS, the BLAS calls, the learners' loops
    locators = {name: f._cache._impl._locator for name, f in functions.items() if f._cache is not None}
    assert set(locators) == set(functions)  # cached, every one
    assert {name for name, loc in locators.items() if not isinstance(loc, jit.LOCATORS)} == set()
    assert {loc.get_source_stamp() for loc in locators.values()} == {jit.package_stamp()}
    # KOMP's loop inlines the kernel row of another file: its cache now depends on that file too
    assert "kernels.py" in {entry[0] for entry in locators["okl.dictionary.komp._komp"].get_source_stamp()}


def test_the_stamp_moves_with_a_file_holding_compiled_code_only(tmp_path):
    (tmp_path / "loops.py").write_text("from okl.jit import njit\n")
    (tmp_path / "report.py").write_text("TEXT = 1\n")
    before = jit.package_stamp.__wrapped__(tmp_path)
    assert [entry[0] for entry in before] == ["loops.py"]
    os.utime(tmp_path / "report.py", ns=(1, 1))
    assert jit.package_stamp.__wrapped__(tmp_path) == before
    os.utime(tmp_path / "loops.py", ns=(1, 1))
    assert jit.package_stamp.__wrapped__(tmp_path) != before


def test_functions_outside_okl_keep_numbas_locators(tmp_path, monkeypatch):
    (tmp_path / "elsewhere_jit.py").write_text("import numba\n@numba.njit(cache=True)\ndef f(x):\n    return x + 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    f = importlib.import_module("elsewhere_jit").f
    assert f(1) == 2
    assert not isinstance(f._cache._impl._locator, jit.LOCATORS)
