"""Lets pytest run this plugin's tests from any directory, alone or in one
run with other plugins' (each has its own `app` and `test_app` modules)."""

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "sdk" / "python"))


def pytest_pycollect_makemodule(module_path, parent):
    """Before this directory's test module is imported: forget the modules
    of a plugin collected earlier, and look here first."""
    for name in ("app", "test_app"):
        sys.modules.pop(name, None)
    if sys.path[0] != str(HERE):
        sys.path.insert(0, str(HERE))
