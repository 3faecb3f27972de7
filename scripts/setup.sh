#!/usr/bin/env bash
# Creates .venv with streamsql and JupyterLab installed (editable), with streamsql's JupyterLab extension.
# With --test, also the test dependencies and Debian's Chromium (for the JupyterLab browser tests), when it
# is missing and apt-get is usable.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
"$PY" - <<'PYEOF'
import sys
if sys.version_info < (3, 11):
    sys.exit(f"streamsql needs Python 3.11 or newer; {sys.executable} is {sys.version.split()[0]}")
PYEOF
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
if [ "${1:-}" = "--test" ]; then
  .venv/bin/python -m pip install -q -e '.[lab,test]'
  if [ ! -x /usr/bin/chromium ]; then
    if command -v apt-get >/dev/null 2>&1; then
      SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
      $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
      echo "note: /usr/bin/chromium is missing and apt-get is not available; the browser test will be skipped" >&2
    fi
  fi
else
  .venv/bin/python -m pip install -q -e '.[lab]'
fi
# the JupyterLab 4 extension (SQL highlighting in %%streamsql cells), prebuilt in streamsql/labextension/
# (source: labextension/): a wheel installs it where JupyterLab looks, share/jupyter/labextensions; an
# editable install has no such data files, so it is linked there (as `jupyter labextension develop` does)
ext=.venv/share/jupyter/labextensions/streamsql-labextension
mkdir -p "$(dirname "$ext")" && rm -rf "$ext" && ln -s "$PWD/streamsql/labextension" "$ext"
# a class-data archive of Spark's JVM classes, which makes each Spark start faster (measured in docs/benchmarks.md,
# start-up; needs Java: skipped, with a note, when there is none; STREAMSQL_CDS=0 turns its use off)
.venv/bin/python -m streamsql.engine.runtime.spark.classdata_build || true
echo "streamsql is installed in .venv"
