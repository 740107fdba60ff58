#!/usr/bin/env bash
# scripts/kafka.sh — a single-node Apache Kafka (KRaft, broker+controller) for tests.
#
# Usage: scripts/kafka.sh {fetch|up|down|status|free-port}
#
#   fetch      resolve Kafka and its runtime dependencies from Maven Central into
#              $KAFKA_CACHE/kafka-$KAFKA_VERSION/libs (cached; Maven's own cache is ~/.m2)
#   up         fetch, format fresh KRaft storage, start the broker on 127.0.0.1:$KAFKA_PORT,
#              wait until it serves, print "127.0.0.1:$KAFKA_PORT" on stdout. Idempotent.
#   down       stop it (SIGTERM, wait, then SIGKILL) and remove $KAFKA_DIR
#   status     print "up 127.0.0.1:PORT pid N" (exit 0) or "down" (exit 1)
#   free-port  print a free TCP port on 127.0.0.1
#
# Only the address goes to stdout; progress and errors go to stderr.
#
# Environment (all optional):
#   KAFKA_VERSION          Kafka release from Maven Central (default 4.4.0, org.apache.kafka:kafka_2.13)
#   LOG4J_VERSION          log4j-slf4j-impl binding version, matching Kafka's log4j-core (default 2.25.5)
#   KAFKA_PORT             client (PLAINTEXT) port (default 9092)
#   KAFKA_CONTROLLER_PORT  KRaft controller port (default: a free port)
#   KAFKA_DIR              data, logs, config, pid (default ~/.cache/connectd/run/kafka-$KAFKA_PORT)
#   KAFKA_CACHE            download cache root (default ~/.cache/connectd)
#   KAFKA_HEAP_OPTS        default "-Xms128m -Xmx512m"
#   KAFKA_JVM_OPTS         default: serial GC and C1-only JIT, which start fastest on 2 cores
#   KAFKA_EXTRA_CONFIG     extra server.properties lines (newline separated), appended last (a key
#                          set there wins, e.g. listeners=... for extra SSL/SASL listeners)
#   KAFKA_FORMAT_ARGS      extra arguments for the storage format step, one per line, e.g.
#                          --add-scram and SCRAM-SHA-512=[name=alice,password=alice-secret]
#   KAFKA_START_TIMEOUT    seconds to wait for the broker to serve (default 120)
#   KAFKA_OWNER_PID        if set, a watchdog stops the broker once this process has exited
#   KAFKA_KEEP_LOGS=1      `down` keeps $KAFKA_DIR/logs
#   KAFKA_CDS=0            no AppCDS archive (by default the first broker's class list is archived
#                          at its exit into $KAFKA_CACHE/kafka-$KAFKA_VERSION/cds-*.jsa; later JVMs
#                          map it and start faster)
#   JAVA_HOME / JAVA       which java to run (default: $JAVA_HOME/bin/java, else java on PATH)
set -euo pipefail

SCRIPT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"

KAFKA_VERSION="${KAFKA_VERSION:-4.4.0}"
LOG4J_VERSION="${LOG4J_VERSION:-2.25.5}"
KAFKA_PORT="${KAFKA_PORT:-9092}"
KAFKA_CACHE="${KAFKA_CACHE:-$HOME/.cache/connectd}"
KAFKA_DIR="${KAFKA_DIR:-$KAFKA_CACHE/run/kafka-$KAFKA_PORT}"
KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xms128m -Xmx512m}"
KAFKA_JVM_OPTS="${KAFKA_JVM_OPTS:--XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData -Djava.awt.headless=true}"
KAFKA_START_TIMEOUT="${KAFKA_START_TIMEOUT:-120}"
KAFKA_HOST=127.0.0.1

if [[ -n "${JAVA:-}" ]]; then :
elif [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then JAVA="$JAVA_HOME/bin/java"
else JAVA=java
fi

HOME_DIR="$KAFKA_CACHE/kafka-$KAFKA_VERSION"
LIBS="$HOME_DIR/libs"
PID_FILE="$KAFKA_DIR/kafka.pid"
WATCHDOG_PID_FILE="$KAFKA_DIR/watchdog.pid"
LOG_DIR="$KAFKA_DIR/logs"
DATA_DIR="$KAFKA_DIR/data"

# AppCDS archive, keyed by the java binary and the fetch (a JDK update or re-fetch gives a new key).
cds_archive() {
  local jbin key
  jbin="$(readlink -f "$(command -v "$JAVA")" 2>/dev/null || echo "$JAVA")"
  key="$(printf '%s %s %s' "$jbin" "$(stat -c %Y "$jbin" 2>/dev/null)" "$(stat -c %Y "$LIBS/.complete" 2>/dev/null)" | cksum | cut -d' ' -f1)"
  echo "$HOME_DIR/cds-$key.jsa"
}

log() { echo "kafka.sh: $*" >&2; }
die() { log "error: $*"; exit 1; }

# port_open PORT: true if something accepts TCP connections on 127.0.0.1:PORT.
port_open() { (exec 3<>"/dev/tcp/$KAFKA_HOST/$1") 2>/dev/null; }

# free_port: a port below the kernel's ephemeral range (so outgoing connections do not
# take it meanwhile) on which nothing listens.
free_port() {
  local p i lo=20000 hi=32000 eph
  if read -r eph _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null && (( eph > lo + 1000 )); then hi=$eph; fi
  for i in $(seq 1 200); do
    p=$(( lo + (RANDOM * 32768 + RANDOM) % (hi - lo) ))
    if ! port_open "$p"; then echo "$p"; return 0; fi
  done
  die "no free port found"
}

# our_pid: prints the pid from the pid file if that process is our broker, else nothing.
our_pid() {
  [[ -f "$PID_FILE" ]] || return 0
  local pid
  pid="$(cat "$PID_FILE" 2>/dev/null || true)"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 0
  if kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$KAFKA_DIR/server.properties"; then
    echo "$pid"
  fi
}

cmd_fetch() {
  command -v mvn >/dev/null 2>&1 || die "mvn (Maven) not found on PATH"
  if [[ -f "$LIBS/.complete" ]]; then return 0; fi
  mkdir -p "$HOME_DIR"
  # Serialise concurrent fetches (several test binaries may start brokers at once).
  exec 8>"$HOME_DIR/.fetch.lock"
  flock 8
  if [[ -f "$LIBS/.complete" ]]; then flock -u 8; return 0; fi
  log "resolving org.apache.kafka:kafka_2.13:$KAFKA_VERSION from Maven Central into $LIBS"
  cat >"$HOME_DIR/pom.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<!-- Generated by scripts/kafka.sh: the runtime classpath of a KRaft Kafka broker. -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>connectd.test</groupId>
  <artifactId>kafka-runtime</artifactId>
  <version>$KAFKA_VERSION</version>
  <packaging>pom</packaging>
  <dependencies>
    <!-- kafka.Kafka and kafka.tools.StorageTool; pulls kafka-server, -storage, -metadata, -raft, log4j-core. -->
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_2.13</artifactId>
      <version>$KAFKA_VERSION</version>
    </dependency>
    <!-- SLF4J 1.x -> log4j2 binding, so the broker logs to a file through log4j2.properties. -->
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-slf4j-impl</artifactId>
      <version>$LOG4J_VERSION</version>
      <scope>runtime</scope>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-dependency-plugin</artifactId>
        <version>3.8.1</version>
      </plugin>
    </plugins>
  </build>
</project>
EOF
  rm -rf "$LIBS.tmp"
  if ! mvn -B -q -f "$HOME_DIR/pom.xml" dependency:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory="$LIBS.tmp" >"$HOME_DIR/mvn.log" 2>&1; then
    tail -n 40 "$HOME_DIR/mvn.log" >&2
    die "mvn dependency:copy-dependencies failed (full log: $HOME_DIR/mvn.log)"
  fi
  [[ -f "$LIBS.tmp/kafka_2.13-$KAFKA_VERSION.jar" ]] || die "kafka_2.13-$KAFKA_VERSION.jar missing after fetch"
  rm -rf "$LIBS"
  mv "$LIBS.tmp" "$LIBS"
  touch "$LIBS/.complete"
  flock -u 8
  log "fetched $(ls "$LIBS"/*.jar | wc -l) jars"
}

write_config() {
  local cport="$1"
  cat >"$KAFKA_DIR/server.properties" <<EOF
# Generated by scripts/kafka.sh: single-node KRaft broker+controller for tests.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$KAFKA_HOST:$cport
listeners=PLAINTEXT://$KAFKA_HOST:$KAFKA_PORT,CONTROLLER://$KAFKA_HOST:$cport
advertised.listeners=PLAINTEXT://$KAFKA_HOST:$KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$DATA_DIR
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
auto.create.topics.enable=true
delete.topic.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
num.network.threads=2
num.io.threads=4
background.threads=4
num.recovery.threads.per.data.dir=1
EOF
  if [[ -n "${KAFKA_EXTRA_CONFIG:-}" ]]; then
    printf '%s\n' "$KAFKA_EXTRA_CONFIG" >>"$KAFKA_DIR/server.properties"
  fi
  # log4j2 config: everything to one file (the format step logs elsewhere).
  local f
  for f in server format; do
    cat >"$KAFKA_DIR/log4j2-$f.properties" <<EOF
status = warn
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = $LOG_DIR/$f.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.apache.name = org.apache.kafka
logger.apache.level = INFO
EOF
  done
}

show_log_tail() {
  local f
  for f in "$LOG_DIR/stdout.log" "$LOG_DIR/format.log" "$LOG_DIR/server.log"; do
    if [[ -s "$f" ]]; then
      echo "----- tail of $f -----" >&2
      tail -n 40 "$f" >&2
    fi
  done
}

start_watchdog() {
  local owner="$1"
  [[ "$owner" =~ ^[0-9]+$ ]] || die "KAFKA_OWNER_PID must be a pid, got '$owner'"
  # Detached, no inherited stdout/stderr (callers may be waiting on those pipes).
  KAFKA_PORT="$KAFKA_PORT" KAFKA_DIR="$KAFKA_DIR" KAFKA_OWNER_PID= \
    nohup bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; rm -f "$3"; exec bash "$2" down' \
      kafka-watchdog "$owner" "$SCRIPT" "$WATCHDOG_PID_FILE" </dev/null >/dev/null 2>&1 8>&- 9>&- &
  echo $! >"$WATCHDOG_PID_FILE"
}

cmd_up() {
  mkdir -p "$KAFKA_DIR"
  exec 9>"$KAFKA_DIR.lock"
  flock 9
  local pid
  pid="$(our_pid)"
  if [[ -n "$pid" ]]; then
    if port_open "$KAFKA_PORT"; then
      log "already up (pid $pid)"
      echo "$KAFKA_HOST:$KAFKA_PORT"
      return 0
    fi
    die "pid $pid is running but $KAFKA_HOST:$KAFKA_PORT does not answer; run '$0 down' first"
  fi
  if port_open "$KAFKA_PORT"; then
    rmdir "$KAFKA_DIR" 2>/dev/null && rm -f "$KAFKA_DIR.lock"
    die "$KAFKA_HOST:$KAFKA_PORT is already in use by another process (set KAFKA_PORT)"
  fi
  command -v "$JAVA" >/dev/null 2>&1 || die "java not found (need Java 17+; set JAVA_HOME)"
  cmd_fetch

  local t0 cport cluster_id
  t0=$(date +%s%N)
  rm -rf "$DATA_DIR" "$LOG_DIR" "$PID_FILE"
  mkdir -p "$DATA_DIR" "$LOG_DIR"
  cport="${KAFKA_CONTROLLER_PORT:-$(free_port)}"
  [[ "$cport" != "$KAFKA_PORT" ]] || die "controller port equals client port $KAFKA_PORT"
  write_config "$cport"

  # Cluster id: 16 random bytes, URL-safe base64 without padding (what `random-uuid` prints).
  # A leading '-' would read as an option, so draw again in that case.
  cluster_id=-
  while [[ "$cluster_id" == -* ]]; do
    cluster_id="$(head -c16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
  done
  local cp="$LIBS/*" cds_use=() cds_dump=() format_args=()
  if [[ -n "${KAFKA_FORMAT_ARGS:-}" ]]; then
    mapfile -t format_args <<<"$KAFKA_FORMAT_ARGS"
  fi
  if [[ "${KAFKA_CDS:-1}" != 0 ]]; then
    local archive
    archive="$(cds_archive)"
    if [[ -f "$archive" ]]; then
      cds_use=(-XX:SharedArchiveFile="$archive")
      cds_dump=("${cds_use[@]}")
    else
      cds_dump=(-XX:ArchiveClassesAtExit="$KAFKA_DIR/cds.jsa")
    fi
  fi
  # shellcheck disable=SC2086
  if ! "$JAVA" $KAFKA_HEAP_OPTS $KAFKA_JVM_OPTS ${cds_use[@]+"${cds_use[@]}"} -Dlog4j2.configurationFile="$KAFKA_DIR/log4j2-format.properties" \
      -cp "$cp" kafka.tools.StorageTool format -t "$cluster_id" -c "$KAFKA_DIR/server.properties" \
      ${format_args[@]+"${format_args[@]}"} \
      </dev/null >"$LOG_DIR/format.out" 2>&1 8>&- 9>&-; then
    cat "$LOG_DIR/format.out" >&2
    show_log_tail
    die "formatting KRaft storage failed"
  fi

  # shellcheck disable=SC2086
  nohup "$JAVA" $KAFKA_HEAP_OPTS $KAFKA_JVM_OPTS ${cds_dump[@]+"${cds_dump[@]}"} \
    -Dlog4j2.configurationFile="$KAFKA_DIR/log4j2-server.properties" \
    -Dkafka.logs.dir="$LOG_DIR" \
    -cp "$cp" kafka.Kafka "$KAFKA_DIR/server.properties" \
    </dev/null >"$LOG_DIR/stdout.log" 2>&1 8>&- 9>&- &
  pid=$!
  echo "$pid" >"$PID_FILE"
  if [[ -n "${KAFKA_OWNER_PID:-}" ]]; then start_watchdog "$KAFKA_OWNER_PID"; fi

  # Ready = process alive, "Kafka Server started" logged, and the client port accepts connections.
  local deadline=$(( $(date +%s) + KAFKA_START_TIMEOUT ))
  while :; do
    if ! kill -0 "$pid" 2>/dev/null; then
      show_log_tail
      rm -f "$PID_FILE"
      die "broker exited during startup"
    fi
    if grep -q "Kafka Server started" "$LOG_DIR/server.log" 2>/dev/null && port_open "$KAFKA_PORT"; then
      break
    fi
    if (( $(date +%s) >= deadline )); then
      show_log_tail
      stop_pid "$pid"
      die "broker did not serve on $KAFKA_HOST:$KAFKA_PORT within ${KAFKA_START_TIMEOUT}s"
    fi
    sleep 0.1
  done
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  log "Kafka $KAFKA_VERSION up on $KAFKA_HOST:$KAFKA_PORT (controller $cport, pid $pid, dir $KAFKA_DIR) in ${ms} ms"
  echo "$KAFKA_HOST:$KAFKA_PORT"
}

# stop_pid PID: SIGTERM, wait up to 30s, then SIGKILL.
stop_pid() {
  local pid="$1" i
  kill -TERM "$pid" 2>/dev/null || return 0
  for i in $(seq 1 300); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  log "pid $pid did not stop after SIGTERM in 30s; sending SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
  for i in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
}

cmd_down() {
  [[ -d "$KAFKA_DIR" ]] || { log "not running ($KAFKA_DIR absent)"; return 0; }
  exec 9>"$KAFKA_DIR.lock"
  flock 9
  local pid wpid
  pid="$(our_pid)"
  if [[ -n "$pid" ]]; then
    stop_pid "$pid"
    log "stopped broker on $KAFKA_HOST:$KAFKA_PORT (pid $pid)"
  else
    log "broker on $KAFKA_HOST:$KAFKA_PORT was not running"
  fi
  if [[ -f "$WATCHDOG_PID_FILE" ]]; then
    wpid="$(cat "$WATCHDOG_PID_FILE" 2>/dev/null || true)"
    # Only kill the watchdog if it is still ours (and we are not the watchdog itself).
    if [[ "$wpid" =~ ^[0-9]+$ && "$wpid" != "$$" ]] && tr '\0' ' ' <"/proc/$wpid/cmdline" 2>/dev/null | grep -q kafka-watchdog; then
      kill "$wpid" 2>/dev/null || true
    fi
  fi
  # Keep the class archive the first broker dumped at exit (written whole, then renamed).
  if [[ -s "$KAFKA_DIR/cds.jsa" && "${KAFKA_CDS:-1}" != 0 ]]; then
    local archive
    archive="$(cds_archive)"
    if [[ ! -f "$archive" ]] && cp "$KAFKA_DIR/cds.jsa" "$archive.$$.tmp" 2>/dev/null; then
      mv -f "$archive.$$.tmp" "$archive"
      log "saved class-data archive $archive"
    fi
    rm -f "$archive.$$.tmp" "$KAFKA_DIR/cds.jsa"
  fi
  if [[ "${KAFKA_KEEP_LOGS:-}" == 1 ]]; then
    rm -rf "$DATA_DIR" "$PID_FILE" "$WATCHDOG_PID_FILE"
  else
    rm -rf "$KAFKA_DIR"
    rm -f "$KAFKA_DIR.lock"
  fi
}

cmd_status() {
  local pid
  pid="$(our_pid)"
  if [[ -n "$pid" ]] && port_open "$KAFKA_PORT"; then
    echo "up $KAFKA_HOST:$KAFKA_PORT pid $pid"
    return 0
  fi
  echo "down"
  return 1
}

case "${1:-}" in
  fetch) cmd_fetch ;;
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  free-port) free_port ;;
  *) echo "usage: $0 {fetch|up|down|status|free-port}" >&2; exit 2 ;;
esac
