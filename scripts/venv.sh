# Sourced by the scripts: create .venv when missing and install the project into it.
# Re-installs only when a pyproject.toml changed since the last install.
python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
. .venv/bin/activate
stamp=.venv/.installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ clients/python/pyproject.toml -nt "$stamp" ]; then
  python -m pip install --quiet --disable-pip-version-check -e ./clients/python -e '.[dev]'
  touch "$stamp"
fi
