# runtime-store: the HTTP service, configured by RUNTIME_STORE_* environment variables.
#   docker build -t runtime-store .
#   docker run -p 8000:8000 -v runtime-store-data:/data runtime-store
# SQLite in the /data volume by default; set RUNTIME_STORE_DATABASE_URL for PostgreSQL
# (e.g. postgresql://user:password@db:5432/runtime_store). Migrations are applied at start
# (under an advisory lock on PostgreSQL, so replicas may start together).

FROM python:3.11-slim AS builder
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /src
COPY clients/python ./clients/python
COPY pyproject.toml README.md ./
COPY alembic ./alembic
COPY app ./app
# A regular (non-editable) install: the wheel carries the migrations as app/_alembic.
RUN pip install --no-cache-dir ./clients/python .

FROM python:3.11-slim
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    RUNTIME_STORE_DATABASE_URL=sqlite:////data/runtime-store.db
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
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]
CMD ["runtime-store", "serve", "--host", "0.0.0.0"]
