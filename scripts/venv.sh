# Sourced by the scripts: create .venv when missing and install the project into it.
# Re-installs only when a pyproject.toml changed since the last install. Says on stderr what
# it does when it installs (the first run takes about a minute); quiet otherwise.
python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "Setting up .venv (first run, about a minute) …" >&2
  "$python" -m venv .venv
fi
. .venv/bin/activate
stamp=.venv/.installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ clients/python/pyproject.toml -nt "$stamp" ]; then
  echo "Installing runtime-store and its client into .venv …" >&2
  python -m pip install --quiet --disable-pip-version-check -e ./clients/python -e '.[dev]'
  touch "$stamp"
  echo "Ready." >&2
fi
