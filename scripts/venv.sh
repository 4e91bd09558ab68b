# Sourced by the scripts: make .venv exactly what uv.lock pins (the service and the client
# installed editable, the `dev` group), then activate it. `uv sync --locked` also refuses a
# lock that no longer matches a pyproject.toml: `./scripts/lock` refreshes it. Quiet when
# nothing changed (a tenth of a second); the first run takes about a minute.
. scripts/uv.sh
[ -x .venv/bin/python ] || echo "Setting up .venv from uv.lock (first run, about a minute) …" >&2
"$UV" sync --locked --quiet
. .venv/bin/activate
