#!/usr/bin/env bash
# Builds the connectd container image from a static binary built on this host (the Dockerfile's `prebuilt`
# stage: FROM scratch, no Go toolchain image pulled) and tags it connectd:<version>.
#   scripts/image.sh [tag]          tag defaults to connectd:$VERSION
# Environment: VERSION (default: git describe, else 0.1.0-dev), CONTAINER (podman or docker; default: the
# first found), GOARCH (default: the host's; the image's platform follows it).
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)}
TAG=${1:-connectd:${VERSION}}
CONTAINER=${CONTAINER:-$(command -v podman || command -v docker || true)}
if [[ -z $CONTAINER ]]; then
	echo "image.sh: neither podman nor docker found" >&2
	exit 1
fi
GOARCH=${GOARCH:-$(go env GOARCH)}
CA=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
if [[ ! -r $CA ]]; then
	echo "image.sh: no CA bundle at $CA (set CA_BUNDLE)" >&2
	exit 1
fi
rm -rf dist/image
mkdir -p dist/image/data/scratch
CGO_ENABLED=0 GOOS=linux GOARCH=$GOARCH go build -trimpath -ldflags "-s -w -X main.Version=${VERSION}" -o dist/image/connectd ./cmd/connectd
cp "$CA" dist/image/ca-certificates.crt
"$CONTAINER" build -f deployments/Dockerfile --target prebuilt --platform "linux/${GOARCH}" \
	--build-arg VERSION="$VERSION" -t "$TAG" .
echo "$TAG"
