# Sourced by ./scripts/test-frameworks: create .venv-frameworks when missing and install the
# project with the agent frameworks into it (pyproject.toml's `frameworks` extra; kept apart
# from .venv, whose suite the frameworks' dependencies would change).
# Re-installs only when a pyproject.toml changed since the last install.
python="${PYTHON:-python3}"
if [ ! -x .venv-frameworks/bin/python ]; then
  echo "Setting up .venv-frameworks (first run, a few minutes) …" >&2
  "$python" -m venv .venv-frameworks
fi
. .venv-frameworks/bin/activate
stamp=.venv-frameworks/.installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ clients/python/pyproject.toml -nt "$stamp" ]; then
  echo "Installing runtime-store with the agent frameworks into .venv-frameworks …" >&2
  python -m pip install --quiet --disable-pip-version-check \
    -e './clients/python[langgraph,openai-agents]' -e '.[dev,frameworks]'
  touch "$stamp"
  echo "Ready." >&2
fi
