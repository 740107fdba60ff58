#!/usr/bin/env bash
# chdb.sh: fetch the real ClickHouse engine (libchdb.so, chDB) used by the ClickHouse sink's tests.
#
#   scripts/chdb.sh fetch   download (once, cached) and print the absolute path of libchdb.so
#   scripts/chdb.sh path    print the path if already cached, exit 1 otherwise
#
# The library comes from the npm package @chdb/lib-linux-x64-gnu (ClickHouse 26.7.x). It is
# ~178 MB packed / ~566 MB unpacked and is never committed: it lives in the cache directory
# ${CONNECTD_CACHE:-$HOME/.cache/connectd}/chdb/<version>/libchdb.so.
# Override the version with CHDB_NPM_VERSION, or skip the download by setting CHDB_LIB_PATH.
set -euo pipefail

VERSION="${CHDB_NPM_VERSION:-26.7.3-stable.1}"
PKG="@chdb/lib-linux-x64-gnu"
CACHE="${CONNECTD_CACHE:-$HOME/.cache/connectd}/chdb/${VERSION}"
LIB="${CACHE}/libchdb.so"

die() { echo "chdb.sh: $*" >&2; exit 1; }

cmd_path() {
  if [[ -n "${CHDB_LIB_PATH:-}" && -f "${CHDB_LIB_PATH}" ]]; then echo "${CHDB_LIB_PATH}"; return 0; fi
  [[ -f "${LIB}" ]] || return 1
  echo "${LIB}"
}

cmd_fetch() {
  if cmd_path 2>/dev/null; then return 0; fi
  [[ "$(uname -s)-$(uname -m)" == "Linux-x86_64" ]] || die "only linux x86_64 is supported (npm ${PKG})"
  command -v npm >/dev/null || die "npm is required to fetch ${PKG}@${VERSION} (apt-get install npm)"
  mkdir -p "$(dirname "${CACHE}")"
  # Serialise concurrent fetches (parallel test binaries).
  exec 9>"${CACHE}.lock"
  flock 9
  if [[ -f "${LIB}" ]]; then echo "${LIB}"; return 0; fi
  TMPDIR_FETCH="$(mktemp -d "${CACHE}.tmp.XXXXXX")"
  trap 'rm -rf "${TMPDIR_FETCH:-}"' EXIT
  local tmp="${TMPDIR_FETCH}"
  echo "chdb.sh: fetching ${PKG}@${VERSION} from npm into ${CACHE}" >&2
  (cd "${tmp}" && npm pack --silent "${PKG}@${VERSION}" >/dev/null) || die "npm pack ${PKG}@${VERSION} failed"
  local tgz
  tgz="$(ls "${tmp}"/*.tgz 2>/dev/null | head -n1)"
  [[ -n "${tgz}" ]] || die "npm pack produced no tarball"
  tar -xzf "${tgz}" -C "${tmp}" || die "cannot unpack ${tgz}"
  local so
  so="$(find "${tmp}/package" -name 'libchdb.so' -type f | head -n1)"
  [[ -n "${so}" ]] || die "libchdb.so not found in ${PKG}@${VERSION}"
  mkdir -p "${CACHE}"
  mv "${so}" "${LIB}.part"
  mv "${LIB}.part" "${LIB}"
  echo "${LIB}"
}

case "${1:-fetch}" in
  fetch) cmd_fetch ;;
  path) cmd_path || die "libchdb.so not cached (run: $0 fetch)" ;;
  *) die "usage: $0 fetch|path" ;;
esac
