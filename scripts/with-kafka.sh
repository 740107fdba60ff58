#!/usr/bin/env bash
# scripts/with-kafka.sh CMD [ARGS...]
#
# Runs CMD with a real Kafka broker: starts one through scripts/kafka.sh on a free port (its own
# KAFKA_DIR), exports KAFKA_BOOTSTRAP=127.0.0.1:PORT, runs CMD, always stops the broker (also on
# failure or Ctrl-C), and exits with CMD's status.
#
# If KAFKA_BOOTSTRAP is already set, that broker is used and nothing is started or stopped.
set -euo pipefail

if [[ $# -eq 0 ]]; then
  echo "usage: $0 CMD [ARGS...]" >&2
  exit 2
fi

if [[ -n "${KAFKA_BOOTSTRAP:-}" ]]; then
  echo "with-kafka.sh: using KAFKA_BOOTSTRAP=$KAFKA_BOOTSTRAP" >&2
  exec "$@"
fi

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
kafka="$here/kafka.sh"

KAFKA_PORT="$(bash "$kafka" free-port)"
KAFKA_DIR="${KAFKA_CACHE:-$HOME/.cache/connectd}/run/kafka-$KAFKA_PORT"
export KAFKA_PORT KAFKA_DIR

stop() { KAFKA_OWNER_PID= bash "$kafka" down || true; }
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The watchdog also stops the broker should this script be killed without running its trap.
KAFKA_BOOTSTRAP="$(KAFKA_OWNER_PID=$$ bash "$kafka" up)"
export KAFKA_BOOTSTRAP
echo "with-kafka.sh: KAFKA_BOOTSTRAP=$KAFKA_BOOTSTRAP" >&2

status=0
"$@" || status=$?
exit "$status"
