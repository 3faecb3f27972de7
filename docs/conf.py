"""Sphinx configuration of the streamsql documentation (``scripts/docs.sh`` builds it).

Strict by design: ``scripts/docs.sh`` and ``tests/test_docs.py`` run ``sphinx-build -W
--keep-going -n``, so a broken link or reference, an undocumented public API member or a page
whose engine-made table disagrees with its scenario fails the build. Tables, charts and error
messages on the pages are produced by the engine while building (``_ext/streamsql_docs.py``);
the tutorials are rendered with their stored outputs, never executed.
"""
from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

project = "streamsql"
author = "the streamsql developers"
copyright = "the streamsql developers"
try:
    from streamsql import __version__ as release
except ImportError:  # pragma: no cover - the package is installed by scripts/setup.sh
    release = ""
version = release

extensions = [
    "myst_nb",                      # Markdown pages (MyST) and notebooks with their stored outputs
    "sphinx.ext.autodoc",           # the Python API from docstrings
    "sphinx.ext.napoleon",
    "streamsql_docs",               # step tables, charts, errors and option tables made by the engine
]

root_doc = "index"
exclude_patterns = ["_build", "**.ipynb_checkpoints", "README.md"]
templates_path = ["_templates"]
html_static_path = ["_static"]
html_css_files = ["streamsql.css"]
html_theme = "furo"
html_title = "streamsql"
html_show_sphinx = False
html_show_sourcelink = False
html_copy_source = False
smartquotes = False             # error messages and SQL are shown exactly as the engine writes them

# MyST: Markdown with directives; headings get anchors so pages can link to sections
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

# notebooks: shown as they were saved (nbval keeps the stored outputs right), never run here
nb_execution_mode = "off"
nb_merge_streams = True
# ipywidgets views need a live kernel: show their text form; charts are SVG made at build time
nb_mime_priority_overrides = [
    ("html", "application/vnd.jupyter.widget-view+json", None),
    ("html", "application/vnd.vegalite.v5+json", None),
    ("html", "image/svg+xml", 1),
]

# the API reference: signatures with their types; members in source order
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"members": True, "undoc-members": True}
napoleon_google_docstring = False
napoleon_numpy_docstring = False

nitpicky = True
# types of other libraries (no network at build time, so no intersphinx) and builtins that
# Sphinx cannot resolve without Python's inventory
nitpick_ignore_regex = [
    ("py:class", r"(pa|pyarrow|pd|pandas|alt|altair|widgets|ipywidgets|traitlets|IPython|np|numpy|sqlglot|exp)\..*"),
    ("py:class", r"(Path|pathlib\.Path|Callable|Iterable|Iterator|Sequence|Mapping|Any|datetime\..*|"
                 r"collections\.abc\..*|typing\..*|os\.PathLike|concurrent\..*|threading\..*|_io\..*)"),
    ("py:class", r"(NoneType|optional|callable|function|t\.Any)"),
    # the engine's internals that appear in signatures but are not part of the public API
    ("py:class", r"(streamsql\.engine\.(plan|runtime\.base|expr|types)\.\w+|Query|Field|Statement|Runtime)"),
    ("py:class", r"streamsql\.engine\.(catalog|log|recording|values|startup)\.\w+"),
    ("py:mod", r"streamsql\.(engine\.(log|recording)|widgets\.static)"),
]

# executed cells (getting-started) store widget state; load no widget JavaScript from elsewhere
nb_ipywidgets_js = {}
