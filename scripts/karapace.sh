#!/usr/bin/env bash
# scripts/karapace.sh — Karapace (Aiven's Apache-2.0 Schema Registry) built from a source checkout, for the
# Avro converter's registry goldens (converters/avro/registry_golden_test.go).
#
# Usage: scripts/karapace.sh {build|up|down|capture|check|outage|plain stop|plain start}
#
#   build    build Karapace from $KARAPACE_SRC into $KARAPACE_BUILD (venv + protopace library; cached)
#   up       build, then start two registries on a Kafka broker (each on a fresh schemas topic): a plain one and
#            one with basic auth (users connect:connect-secret read/write, reader:reader-secret read only);
#            prints "SCHEMA_REGISTRY_URL=… SCHEMA_REGISTRY_AUTH_URL=…" on stdout
#   down     stop them (and the broker this script started)
#   capture  up, run the golden scenarios against Karapace writing testdata/avro/registry-goldens/*.json, and
#            the interop tests against it, then check avrotest against the new goldens, then down
#   check    up, run the golden scenarios against Karapace comparing with the goldens, and the interop tests
#            (Confluent's Python serializer and deserializer) against it, then down
#   outage   up, run TestRuntimeRegistryOutageAndRestart against Karapace (stopped and restarted on its
#            schemas topic by `plain stop` / `plain start`), then down
#
# Without a Karapace source checkout (KARAPACE_SRC unset or not a directory) every command prints why and
# exits 0: the goldens are then checked against avrotest only (`go test ./converters/avro/`).
#
# The source is used as is, with two substitutions made in the build directory, never in the checkout:
#   - PyPI's avro (AVRO_VERSION, default 1.12.1) instead of the avro fork pinned in requirements.txt
#   - upstream github.com/bufbuild/buf (BUF_VERSION, default v1.34.0, from the Go module proxy) instead of the
#     buf fork the protopace library replaces it with, with buf's private-package usage check disabled
#     (it panics when buf's private packages are linked into a program outside github.com/bufbuild)
#
# Environment: KARAPACE_SRC (checkout of github.com/Aiven-Open/karapace, e.g. its 6.2.0 tag),
#   KARAPACE_VERSION (the version the checkout is; default: its version.py, else git describe, else its
#   directory name), KARAPACE_PYTHON (a Python 3.12+ interpreter; default: python3.12, then python3),
#   KARAPACE_BUILD (default ~/.cache/connectd/karapace/build-<source commit or dir name>),
#   KAFKA_BOOTSTRAP (a broker to use; default: one started with scripts/kafka.sh on a free port),
#   KARAPACE_RUN (pid files and logs; default ~/.cache/connectd/run/karapace-<pid>; removed by down unless
#   KARAPACE_KEEP_LOGS=1).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
AVRO_VERSION="${AVRO_VERSION:-1.12.1}"
BUF_VERSION="${BUF_VERSION:-v1.34.0}"
STATE="${KARAPACE_STATE:-$HOME/.cache/connectd/run/karapace.state}"

log() { echo "karapace.sh: $*" >&2; }

have_source() {
  if [[ -z "${KARAPACE_SRC:-}" || ! -d "${KARAPACE_SRC:-}/src/karapace" ]]; then
    log "skipped: no Karapace source (set KARAPACE_SRC to a checkout of github.com/Aiven-Open/karapace)"
    return 1
  fi
}

source_version() {
  if [[ -n "${KARAPACE_VERSION:-}" ]]; then
    echo "$KARAPACE_VERSION"
  elif [[ -f "$KARAPACE_SRC/src/karapace/version.py" ]]; then
    sed -n 's/^__version__ = "\(.*\)"/\1/p' "$KARAPACE_SRC/src/karapace/version.py" | head -1
  elif git -C "$KARAPACE_SRC" describe --tags >/dev/null 2>&1; then
    git -C "$KARAPACE_SRC" describe --tags
  else
    basename "$KARAPACE_SRC"
  fi
}

pick_python() {
  local p
  for p in "${KARAPACE_PYTHON:-}" python3.12 python3.13 "$HOME"/.pyenv/versions/3.12*/bin/python3 python3; do
    [[ -n "$p" ]] || continue
    command -v "$p" >/dev/null 2>&1 || [[ -x "$p" ]] || continue
    if "$p" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; then
      echo "$p"; return
    fi
  done
  log "no Python 3.12+ interpreter found (set KARAPACE_PYTHON)"; return 1
}

build() {
  local ver; ver="$(source_version)"
  BUILD="${KARAPACE_BUILD:-$HOME/.cache/connectd/karapace/build-$ver}"
  if [[ -f "$BUILD/.done" ]]; then return; fi
  mkdir -p "$BUILD"
  exec 8>"$BUILD.lock"; flock 8
  if [[ -f "$BUILD/.done" ]]; then return; fi
  local py; py="$(pick_python)"
  log "building Karapace $ver from $KARAPACE_SRC in $BUILD (python: $py)"
  [[ -x "$BUILD/venv/bin/python" ]] || "$py" -m venv "$BUILD/venv" >&2
  # Substitution 1: PyPI's avro instead of the pinned fork.
  sed -e "s|^avro @ .*|avro==$AVRO_VERSION|" "$KARAPACE_SRC/requirements/requirements.txt" > "$BUILD/requirements.txt"
  "$BUILD/venv/bin/pip" install -q --disable-pip-version-check -r "$BUILD/requirements.txt" >&2

  # Substitution 2: upstream buf for the fork, usage check disabled; protopace built as a C shared library
  # (what setuptools-golang does for the protopacelib extension).
  local modcache bufsrc
  modcache="$(go env GOMODCACHE)"
  (cd "$KARAPACE_SRC/go/protopace" && GOFLAGS=-mod=mod go mod download "github.com/bufbuild/buf@$BUF_VERSION") >&2
  bufsrc="$modcache/github.com/bufbuild/buf@$BUF_VERSION"
  rm -rf "$BUILD/buf" "$BUILD/protopace"
  cp -r "$bufsrc" "$BUILD/buf"; chmod -R u+w "$BUILD/buf"
  sed -i 's/^\t\tpanic(err.Error())$/\t\t_ = err \/\/ usage check disabled/' "$BUILD/buf/private/usage/usage.go"
  grep -q 'usage check disabled' "$BUILD/buf/private/usage/usage.go" || { log "buf usage check not found in $BUF_VERSION"; return 1; }
  cp -r "$KARAPACE_SRC/go/protopace" "$BUILD/protopace"
  (cd "$BUILD/protopace" && go mod edit -replace "github.com/bufbuild/buf=$BUILD/buf" &&
    GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1 &&
    GOFLAGS=-mod=mod CGO_ENABLED=1 go build -buildmode=c-shared -o "$BUILD/lib/protopacelib.so" .) >&2

  # The version module setuptools-scm would generate, in an overlay on the Python path.
  mkdir -p "$BUILD/overlay"
  if [[ ! -f "$KARAPACE_SRC/src/karapace/version.py" ]]; then
    printf '__version__ = "%s"\nversion = "%s"\n' "$ver" "$ver" > "$BUILD/overlay/karapace_version.py"
  fi
  echo "$ver" > "$BUILD/.done"
  log "built Karapace $ver"
}

free_port() { bash "$ROOT/scripts/kafka.sh" free-port; }

# start_one NAME PORT TOPIC [AUTHFILE [WAIT]]: one Karapace registry; returns once it accepts registrations
# (it has read its schemas topic), or with WAIT=http as soon as it answers HTTP (a restart, when it may
# still answer 40403 for schemas it has not read yet).
start_one() {
  local name=$1 port=$2 topic=$3 authfile=${4:-} wait=${5:-ready} run=$RUN/$1
  mkdir -p "$run"
  (
    export PYTHONPATH="$RUN/site:$KARAPACE_SRC/src:$BUILD/lib"
    export KARAPACE_BOOTSTRAP_URI="$KAFKA_BOOTSTRAP" KARAPACE_HOST=127.0.0.1 KARAPACE_PORT="$port"
    export KARAPACE_TOPIC_NAME="$topic" KARAPACE_GROUP_ID="sr-$topic" KARAPACE_CLIENT_ID="sr-$name"
    export KARAPACE_REPLICATION_FACTOR=1 KARAPACE_KARAPACE_REST=false KARAPACE_KARAPACE_REGISTRY=true
    export KARAPACE_LOG_LEVEL=WARNING KARAPACE_COMPATIBILITY=BACKWARD
    export PYTHONHASHSEED=0 # stable order of sets (incompatibility lists) between runs
    [[ -n "$authfile" ]] && export KARAPACE_REGISTRY_AUTHFILE="$authfile"
    cd "$run"
    exec setsid "$BUILD/venv/bin/python" -m karapace > "$run/karapace.log" 2>&1
  ) &
  echo $! > "$run/pid"
  local deadline=$((SECONDS + ${KARAPACE_START_TIMEOUT:-180}))
  # Ready once it answers and has finished reading its schemas topic (a registration succeeds).
  until curl -s -o /dev/null -u connect:connect-secret "http://127.0.0.1:$port/subjects"; do
    if ! kill -0 "$(cat "$run/pid")" 2>/dev/null; then log "$name exited:"; tail -30 "$run/karapace.log" >&2; return 1; fi
    if (( SECONDS > deadline )); then log "$name did not start"; tail -30 "$run/karapace.log" >&2; return 1; fi
    sleep 0.2
  done
  if [[ $wait == http ]]; then log "$name answering on http://127.0.0.1:$port (topic $topic)"; return; fi
  until curl -sf -o /dev/null -u connect:connect-secret -H 'Content-Type: application/vnd.schemaregistry.v1+json' \
      -X POST "http://127.0.0.1:$port/subjects/_ready/versions" -d '{"schema":"\"string\""}'; do
    if (( SECONDS > deadline )); then log "$name not accepting registrations"; tail -30 "$run/karapace.log" >&2; return 1; fi
    sleep 1
  done
  curl -sf -o /dev/null -u connect:connect-secret -X DELETE "http://127.0.0.1:$port/subjects/_ready" || true
  curl -sf -o /dev/null -u connect:connect-secret -X DELETE "http://127.0.0.1:$port/subjects/_ready?permanent=true" || true
  log "$name up on http://127.0.0.1:$port (topic $topic)"
}

# site: a sitecustomize providing karapace.version (generated at packaging time) when the checkout lacks it.
site() {
  mkdir -p "$RUN/site"
  cat > "$RUN/site/sitecustomize.py" <<EOF
import sys
try:
    import karapace.version  # noqa: F401
except ImportError:
    sys.path.insert(0, "$BUILD/overlay")
    import karapace_version
    sys.modules["karapace.version"] = karapace_version
EOF
}

# authfile FILE: users hashed by Karapace's own karapace_mkpasswd, and their ACLs.
authfile() {
  local f=$1 u p users=""
  for u in connect reader; do
    p="$u-secret"
    users+="$(PYTHONPATH="$RUN/site:$KARAPACE_SRC/src:$BUILD/lib" "$BUILD/venv/bin/python" -m karapace.core.auth -u "$u" -a sha512 "$p" "salt-$u"),"
  done
  cat > "$f" <<EOF
{"users": [${users%,}],
 "permissions": [
  {"username": "connect", "operation": "Write", "resource": "Subject:.*"},
  {"username": "connect", "operation": "Write", "resource": "Config:"},
  {"username": "reader", "operation": "Read", "resource": "Subject:.*"},
  {"username": "reader", "operation": "Read", "resource": "Config:"}]}
EOF
}

up() {
  build
  RUN="${KARAPACE_RUN:-$HOME/.cache/connectd/run/karapace-$$}"
  mkdir -p "$RUN" "$(dirname "$STATE")"
  if [[ -z "${KAFKA_BOOTSTRAP:-}" ]]; then
    local kp; kp="$(free_port)"
    KAFKA_BOOTSTRAP="$(KAFKA_PORT=$kp bash "$ROOT/scripts/kafka.sh" up)"
    echo "$kp" > "$RUN/kafka-port"
  fi
  local p1 p2 t1 t2
  p1="$(free_port)"; p2="$(free_port)"
  t1="_schemas_plain_$(date +%s)_$$"; t2="_schemas_auth_$(date +%s)_$$"
  site
  authfile "$RUN/auth.json"
  start_one plain "$p1" "$t1"
  start_one auth "$p2" "$t2" "$RUN/auth.json"
  cat > "$STATE" <<EOF
RUN=$RUN
BUILD=$BUILD
KAFKA_BOOTSTRAP=$KAFKA_BOOTSTRAP
PLAIN_PORT=$p1
PLAIN_TOPIC=$t1
SCHEMA_REGISTRY_URL=http://127.0.0.1:$p1
SCHEMA_REGISTRY_AUTH_URL=http://127.0.0.1:$p2
SCHEMA_REGISTRY_NAME="Karapace $(cat "$BUILD/.done") (avro $AVRO_VERSION, buf $BUF_VERSION)"
EOF
  echo "SCHEMA_REGISTRY_URL=http://127.0.0.1:$p1 SCHEMA_REGISTRY_AUTH_URL=http://127.0.0.1:$p2"
}

stop_one() {
  local pid
  [[ -f "$RUN/$1/pid" ]] || return 0
  pid="$(cat "$RUN/$1/pid")"
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  kill -KILL -- "-$pid" 2>/dev/null || true
  rm -f "$RUN/$1/pid"
}

down() {
  [[ -f "$STATE" ]] || { log "nothing to stop"; return 0; }
  # shellcheck disable=SC1090
  source "$STATE"
  stop_one plain
  stop_one auth
  if [[ -f "$RUN/kafka-port" ]]; then KAFKA_PORT="$(cat "$RUN/kafka-port")" bash "$ROOT/scripts/kafka.sh" down >&2 || true; fi
  rm -f "$STATE"
  [[ "${KARAPACE_KEEP_LOGS:-0}" == 1 ]] || rm -rf "$RUN"
  log "stopped"
}

run_goldens() (
  # shellcheck disable=SC1090
  source "$STATE"
  export SCHEMA_REGISTRY_URL SCHEMA_REGISTRY_AUTH_URL SCHEMA_REGISTRY_NAME
  cd "$ROOT" && REGISTRY_GOLDENS="$1" go test -count=1 -run "$2" ./converters/avro/
)

# plain {stop|start}: take the plain registry down, or start it again on its port and schemas topic
# (the outage test's SCHEMA_REGISTRY_CTL).
plain() {
  # shellcheck disable=SC1090
  source "$STATE"
  case "$1" in
    stop) stop_one plain; log "plain registry stopped" ;;
    start) start_one plain "$PLAIN_PORT" "$PLAIN_TOPIC" "" http ;;
  esac
}

cmd="${1:-}"
case "$cmd" in
  build|up|capture|check|outage) have_source || exit 0 ;;
esac
case "$cmd" in
  build) build ;;
  up) up ;;
  down) down ;;
  plain) plain "${2:-}" ;;
  outage)
    trap down EXIT; up >/dev/null
    # shellcheck disable=SC1090
    source "$STATE"
    (cd "$ROOT" && SCHEMA_REGISTRY_URL="$SCHEMA_REGISTRY_URL" SCHEMA_REGISTRY_CTL="bash $ROOT/scripts/karapace.sh plain" \
      KAFKA_BOOTSTRAP="$KAFKA_BOOTSTRAP" go test -count=1 -v -run 'TestRuntimeRegistryOutageAndRestart' ./converters/avro/) ;;
  capture)
    trap down EXIT; up >/dev/null
    run_goldens capture 'TestRegistryGoldens'
    run_goldens compare 'TestInterop'
    log "goldens written; checking avrotest against them"
    (cd "$ROOT" && env -u SCHEMA_REGISTRY_URL -u SCHEMA_REGISTRY_AUTH_URL go test -count=1 -run 'TestRegistryGoldens' ./converters/avro/) ;;
  check)
    trap down EXIT; up >/dev/null
    run_goldens compare 'TestRegistryGoldens|TestInterop' ;;
  *) echo "usage: $0 {build|up|down|capture|check|outage|plain stop|plain start}" >&2; exit 2 ;;
esac
