"""Puts the SDK on the import path, so pytest runs from any directory."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
