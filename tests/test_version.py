"""coiter's version has one source, pyproject.toml: the build passes it to the C++ core
(CMakeLists.txt's COITER_VERSION), whose value is ``coiter.__version__``. A core built from
another version, or a version written in a second place, fails here."""

import importlib.metadata
import pathlib
import tomllib

import pytest

import coiter as ct
from coiter import _core

ROOT = pathlib.Path(__file__).resolve().parents[1]


def pyproject_version() -> str:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["version"]


def test_the_package_and_the_core_report_pyprojects_version():
    assert ct.__version__ == pyproject_version()
    assert _core.__version__ == ct.__version__


def test_the_installed_distribution_agrees():
    # pip's metadata (the wheel's or the editable install's) takes the same version.
    try:
        version = importlib.metadata.version("coiter")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("coiter is not installed as a distribution (imported from the source tree)")
    assert version == pyproject_version()


def test_the_license_file_is_pyprojects_license():
    with open(ROOT / "pyproject.toml", "rb") as f:
        license_ = tomllib.load(f)["project"]["license"]
    assert license_ == {"text": "MIT"}
    assert (ROOT / "LICENSE").read_text().startswith("MIT License\n")
