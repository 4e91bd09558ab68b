# Sourced by ./scripts/test-frameworks: .venv-frameworks, exactly what uv.lock pins for the
# `frameworks` group (the `dev` group, LangGraph, OpenAI Agents, the client's adapter
# extras), then activate it. Kept apart from .venv, whose suite the frameworks'
# dependencies would change.
. scripts/uv.sh
[ -x .venv-frameworks/bin/python ] || echo "Setting up .venv-frameworks from uv.lock …" >&2
UV_PROJECT_ENVIRONMENT=.venv-frameworks "$UV" sync --locked --quiet --group frameworks
. .venv-frameworks/bin/activate
