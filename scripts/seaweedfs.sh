#!/usr/bin/env bash
# SeaweedFS (Apache-2.0), a self-hosted S3-compatible object store, built from its Go module through the Go
# module proxy (no binary download site needed).
#   seaweedfs.sh fetch              build the `weed` binary once (cached); print its path
#   seaweedfs.sh start DIR PORT     run one all-in-one server (master, volume, filer, S3 on 127.0.0.1:PORT) with
#                                   its data in DIR; wait until the S3 endpoint answers
#   seaweedfs.sh stop DIR           stop the server started in DIR (by its pid file)
# The S3 endpoint accepts the access key "test" with secret "test" (an identities file written into DIR).
# SEAWEEDFS_VERSION pins the module version; the binary lives in ~/.cache/connectd/seaweedfs-VERSION.
set -euo pipefail
SEAWEEDFS_VERSION=${SEAWEEDFS_VERSION:-v0.0.0-20261109003541-7506e5f91cd6}
CACHE="$HOME/.cache/connectd/seaweedfs-$SEAWEEDFS_VERSION"
WEED="$CACHE/weed"

fetch() {
  [ -x "$WEED" ] && return
  mkdir -p "$CACHE"
  exec 9>"$CACHE.lock"
  flock 9
  [ -x "$WEED" ] && return
  echo "seaweedfs.sh: building weed $SEAWEEDFS_VERSION from the Go module proxy (several minutes, once)" >&2
  local mod="$CACHE/build"
  rm -rf "$mod"
  mkdir -p "$mod"
  # `go install pkg@version` refuses modules with replace directives; a module that requires it builds it
  cat > "$mod/go.mod" <<MOD
module seaweedfsbuild

go 1.26

require github.com/seaweedfs/seaweedfs $SEAWEEDFS_VERSION

replace github.com/tyler-smith/go-bip39 => github.com/cosmos/go-bip39 v1.0.0
MOD
  printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/seaweedfs/seaweedfs/weed"\n' > "$mod/tools.go"
  (cd "$mod" && go mod tidy >&2 && CGO_ENABLED=0 go build -trimpath -o "$WEED.part" github.com/seaweedfs/seaweedfs/weed)
  mv "$WEED.part" "$WEED"
  rm -rf "$mod"
}

start() {
  local dir=$1 port=$2
  fetch
  mkdir -p "$dir/data"
  cat > "$dir/s3.json" <<JSON
{"identities":[{"name":"test","credentials":[{"accessKey":"test","secretKey":"test"}],"actions":["Admin","Read","Write","List","Tagging"]}]}
JSON
  # every listener on its own free port: weed's defaults put gRPC at port+10000, past 65535 for high ports
  local p=() i
  for i in $(seq 1 9); do p+=("$(free_port)"); done
  "$WEED" server -ip=127.0.0.1 -ip.bind=127.0.0.1 -dir="$dir/data" -master.telemetry=false \
    -master.port="${p[0]}" -master.port.grpc="${p[1]}" -volume.port="${p[2]}" -volume.port.grpc="${p[3]}" \
    -filer -filer.port="${p[4]}" -filer.port.grpc="${p[5]}" \
    -s3 -s3.port="$port" -s3.port.grpc="${p[6]}" -s3.port.iceberg="${p[7]}" -s3.config="$dir/s3.json" \
    -master.volumeSizeLimitMB=64 >"$dir/weed.log" 2>&1 &
  echo $! >"$dir/weed.pid"
  for _ in $(seq 1 300); do
    if curl -s -o /dev/null "http://127.0.0.1:$port/"; then return 0; fi
    kill -0 "$(cat "$dir/weed.pid")" 2>/dev/null || { echo "seaweedfs.sh: weed exited; log:" >&2; tail -30 "$dir/weed.log" >&2; exit 1; }
    sleep 0.2
  done
  echo "seaweedfs.sh: S3 on port $port did not answer within 60 s; log:" >&2
  tail -30 "$dir/weed.log" >&2
  exit 1
}

stop() {
  local dir=$1
  [ -f "$dir/weed.pid" ] || return 0
  local pid
  pid=$(cat "$dir/weed.pid")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$dir/weed.pid"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

case "${1:-}" in
  fetch) fetch; echo "$WEED" ;;
  start) shift; start "$@" ;;
  stop) shift; stop "$@" ;;
  *) sed -n '2,9p' "$0" >&2; exit 2 ;;
esac
