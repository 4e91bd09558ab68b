# Sourced by the scripts: uv, pinned (pyproject.toml's [tool.uv] required-version), in a
# venv of its own (.venv-uv), installed with pip when missing. Sets UV to its path and keeps
# uv on this machine's Python (it never downloads one).
uv_version=0.13.10
export UV="$PWD/.venv-uv/bin/uv" UV_PYTHON_DOWNLOADS=never UV_PYTHON="${PYTHON:-python3}"
if ! "$UV" --version 2>/dev/null | grep -q "^uv $uv_version"; then
  echo "Installing uv $uv_version into .venv-uv …" >&2
  "$UV_PYTHON" -m venv .venv-uv
  .venv-uv/bin/python -m pip install --quiet --disable-pip-version-check "uv==$uv_version" 2>&1 \
    | { grep -v "^WARNING: Location" || true; }
fi
