#!/usr/bin/env bash
# Builds the documentation site into docs/_build/html (open docs/_build/html/index.html).
# Strict, as CI builds it: a warning (broken link or reference, undocumented public API member,
# a step table that disagrees with its scenario) fails the build. Installs the docs extra first
# when it is missing. Extra arguments go to sphinx-build (e.g. -E to rebuild every page).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || { echo "run ./scripts/setup.sh first" >&2; exit 1; }
if ! .venv/bin/python -c "import sphinx, myst_nb, furo, vl_convert" 2>/dev/null; then
  .venv/bin/python -m pip install -q -e '.[docs]'
fi
.venv/bin/python -m sphinx -W --keep-going -n -b html "$@" docs docs/_build/html
echo "open docs/_build/html/index.html"
