"""Sphinx configuration of coiter's documentation site (docs/testing.md, "The documentation site").

Build: ``python -m sphinx -W --keep-going -b html docs build/docs``. The pages are the Markdown
files of docs/ (read by MyST, so they stay readable on GitHub and in an editor); the API
reference is generated from the docstrings of coiter's public names (autodoc, NumPy style by
napoleon), so coiter must be importable: built, or from the source tree on PYTHONPATH.
"""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
with open(ROOT / "pyproject.toml", "rb") as f:
    release = tomllib.load(f)["project"]["version"]

project = "coiter"
author = "the coiter contributors"
copyright = "2026, the coiter contributors"
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
# Not pages of the site: the build output and Sphinx's own folders.
exclude_patterns = ["_build"]

# MyST: GitHub-style heading anchors, so the pages' links like schedules.md#legality-... resolve
# in the site as they do on GitHub.
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]

# The code blocks are Python, bash and the compiler's output; plain text is not highlighted.
highlight_language = "text"

autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True}
autodoc_member_order = "bysource"
# The docstrings give each parameter's type in NumPy's words; the annotations (long unions of
# NumPy's typing aliases) would repeat them less readably.
autodoc_typehints = "none"
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_rtype = False

html_theme = "pydata_sphinx_theme"
html_title = f"coiter {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_static_path: list[str] = []
html_show_sourcelink = False
