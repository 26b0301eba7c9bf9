"""Sphinx configuration of the documentation site (`./dev docs` builds it into build/docs/html).

The pages are Markdown (MyST); the API reference is made from the installed package's docstrings
and signatures (autodoc), under the names users import: `simpler.Worker`, never the module a
name is defined in. Every warning is an error and every cross-reference must resolve (`-W -n`).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "simpler"
author = "the simpler developers"
copyright = "2026, the simpler developers"
extensions = ["myst_parser", "sphinx.ext.autodoc", "public_names", "nanobind_signatures"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns: list[str] = []
html_theme = "furo"
html_title = "simpler"
html_static_path: list[str] = []

# The docstrings are prose with `names` in single backticks: set them as code.
default_role = "code"
autoclass_content = "both"  # the class docstring, then __init__'s (its parameters)
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
nitpicky = True

# Names from Python, NumPy and typing that signatures mention: not this site's entries.
nitpick_ignore_regex = [(r"py:.*", r"(collections\.abc|os|numpy|typing|concurrent\.futures)\..*")]
