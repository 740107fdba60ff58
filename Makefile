# connectd Makefile.
#
# Tests that need Kafka get a real broker through scripts/with-kafka.sh, which starts one
# (scripts/kafka.sh, fetched from Maven Central and cached under ~/.cache/connectd), exports
# KAFKA_BOOTSTRAP, runs the command and always stops the broker. Reuse it for new targets:
#   $(WITH_KAFKA) <command>

SHELL := /bin/bash
.DEFAULT_GOAL := build

GO         ?= go
PKGS       ?= ./...
TESTFLAGS  ?= -count=1 -timeout 30m
WITH_KAFKA := scripts/with-kafka.sh

.PHONY: build vet test test-race kafka-fetch kafka-up kafka-down kafka-status

build:
	$(GO) build ./...

vet:
	$(GO) vet ./...

## test: all tests against one real Kafka broker (started and stopped around the run)
test:
	$(WITH_KAFKA) $(GO) test $(TESTFLAGS) $(PKGS)

## test-race: as test, with the race detector
test-race:
	$(WITH_KAFKA) $(GO) test -race $(TESTFLAGS) $(PKGS)

## kafka-*: a long-lived broker for development on 127.0.0.1:$${KAFKA_PORT:-9092}
##   make kafka-up && export KAFKA_BOOTSTRAP=127.0.0.1:9092   (make test then reuses it)
kafka-fetch:
	scripts/kafka.sh fetch

kafka-up:
	scripts/kafka.sh up

kafka-down:
	scripts/kafka.sh down

kafka-status:
	scripts/kafka.sh status
