# runtime-store: the HTTP service, configured by RUNTIME_STORE_* environment variables.
# It requires tokens (RUNTIME_STORE_TOKEN_KEY) and stores the first admin token from
# RUNTIME_STORE_BOOTSTRAP_ADMIN_TOKEN at its first start. Make both once, keep the file:
#   docker build -t runtime-store .
#   python3 -c 'import secrets; t = secrets.token_urlsafe; print(f"RUNTIME_STORE_TOKEN_KEY={t(32)}\nRUNTIME_STORE_BOOTSTRAP_ADMIN_TOKEN=rst_{t(32)}")' > runtime-store.env
#   docker run -d --name runtime-store -p 8000:8000 -v runtime-store-data:/data --env-file runtime-store.env runtime-store
# Requests then carry `Authorization: Bearer <the RUNTIME_STORE_BOOTSTRAP_ADMIN_TOKEN>`; more
# tokens: docker exec runtime-store runtime-store tokens create --role worker --name NAME.
# SQLite in the /data volume by default; set RUNTIME_STORE_DATABASE_URL for PostgreSQL
# (e.g. postgresql://user:password@db:5432/runtime_store). Migrations are applied at start
# (under an advisory lock on PostgreSQL, so replicas may start together).
# tests/test_dockerfile.py builds the image and runs these lines (RUNTIME_STORE_DOCKER_TESTS=1).

FROM python:3.11-slim AS builder
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    UV=/opt/uv/bin/uv
# uv, pinned as in pyproject.toml, only in the builder: it installs from uv.lock.
RUN python -m venv /opt/uv && /opt/uv/bin/pip install --no-cache-dir uv==0.13.10
WORKDIR /src
# The dependencies first, exactly as uv.lock pins them (hashes checked), from the lock and
# the two pyproject.toml files only: this layer is rebuilt when they change, not on every
# change of the code. scripts/install-service is what tests/install/ runs too.
COPY pyproject.toml uv.lock README.md ./
COPY clients/python/pyproject.toml clients/python/README.md ./clients/python/
COPY scripts/install-service ./scripts/
RUN scripts/install-service dependencies /opt/venv
COPY clients/python ./clients/python
COPY alembic ./alembic
COPY app ./app
# Both wheels, built here and installed without their dependencies (the layer above): a
# regular install, whose wheel carries the migrations as app/_alembic.
RUN scripts/install-service wheels /opt/venv

FROM python:3.11-slim
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    RUNTIME_STORE_DATABASE_URL=sqlite:////data/runtime-store.db \
    RUNTIME_STORE_PORT=8000
RUN groupadd --system --gid 10001 runtime-store \
    && useradd --system --uid 10001 --gid runtime-store --home-dir /data --no-create-home \
        --shell /usr/sbin/nologin runtime-store \
    && mkdir /data \
    && chown runtime-store:runtime-store /data
COPY --from=builder /opt/venv /opt/venv
USER 10001:10001
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8000
# The port serve listens on: RUNTIME_STORE_PORT, as serve reads it.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ['RUNTIME_STORE_PORT'] + '/healthz', timeout=4)"]
CMD ["runtime-store", "serve", "--host", "0.0.0.0"]
