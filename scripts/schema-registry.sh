#!/usr/bin/env bash
# scripts/schema-registry.sh — the Python side of the Avro interop tests.
#
# Usage: scripts/schema-registry.sh {venv|python|karapace-check}
#
#   venv | python   create (once) a virtualenv with confluent-kafka[avro,schemaregistry] from PyPI under
#                   $SR_VENV (default ~/.cache/connectd/sr-venv) and print its python path on stdout
#   karapace-check  try `pip install karapace` (it is not published on PyPI, so this fails; kept to make
#                   the choice of the Go test registry, internal/testutil/avrotest, checkable)
#
# The Schema Registry used by the tests is internal/testutil/avrotest (Go, in-memory, Confluent REST API):
# Confluent's own server is not on Maven Central and Karapace is not on PyPI. avrotest's answers are checked
# against goldens captured from Karapace built from its source (scripts/karapace.sh).
# Environment: SR_VENV, PYTHON (interpreter used to create the venv, default python3),
#              CONFLUENT_KAFKA_VERSION (default 2.16.1).
set -euo pipefail

SR_VENV="${SR_VENV:-$HOME/.cache/connectd/sr-venv}"
PYTHON="${PYTHON:-python3}"
CONFLUENT_KAFKA_VERSION="${CONFLUENT_KAFKA_VERSION:-2.16.1}"

log() { echo "schema-registry.sh: $*" >&2; }

ensure_venv() {
  local py="$SR_VENV/bin/python"
  if [[ -x "$py" ]] && "$py" -c 'import confluent_kafka.schema_registry.avro, fastavro' 2>/dev/null; then
    echo "$py"; return
  fi
  mkdir -p "$(dirname "$SR_VENV")"
  # Serialize concurrent creations (parallel test packages).
  exec 9>"$SR_VENV.lock"
  flock 9
  if [[ -x "$py" ]] && "$py" -c 'import confluent_kafka.schema_registry.avro, fastavro' 2>/dev/null; then
    echo "$py"; return
  fi
  log "creating $SR_VENV"
  rm -rf "$SR_VENV"
  "$PYTHON" -m venv "$SR_VENV" >&2
  "$SR_VENV/bin/pip" install -q --disable-pip-version-check \
    "confluent-kafka[avro,schemaregistry]==$CONFLUENT_KAFKA_VERSION" >&2
  "$py" -c 'import confluent_kafka.schema_registry.avro, fastavro' >&2
  echo "$py"
}

case "${1:-venv}" in
  venv|python) ensure_venv ;;
  karapace-check)
    d="$(mktemp -d)"; trap 'rm -rf "$d"' EXIT
    "$PYTHON" -m pip download --no-deps -q -d "$d" karapace >&2 && echo "karapace available" || { echo "karapace not available on PyPI"; exit 1; } ;;
  *) echo "usage: $0 {venv|python|karapace-check}" >&2; exit 2 ;;
esac
