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
# -p 4: the end-to-end packages under test/ spend most of their time waiting on workers, brokers and commit
# intervals, so four packages at a time on two cores finish sooner than the default of one per core
TESTFLAGS  ?= -count=1 -timeout 30m -p 4
WITH_KAFKA := scripts/with-kafka.sh

.PHONY: build image connectd docs run demo vet lint test test-jvm-baseline test-handover test-trino test-s3 test-short test-race bench fuzz soak kafka-fetch kafka-up kafka-down kafka-status

build:
	$(GO) build ./...

## image: the container image from a static binary built on this host (no Go toolchain image pulled), tagged
## connectd:$$VERSION (default: git describe); podman or docker (docs/DEPLOY.md)
image:
	scripts/image.sh

## connectd: the binary, ./connectd; GET / reports the checkout's commit also from a git worktree or with
## -buildvcs=false, where the go command stamps none
connectd:
	$(GO) build -ldflags "-X github.com/connectd/connectd/api.Revision=$$(git rev-parse HEAD 2>/dev/null)" -o connectd ./cmd/connectd

## docs: regenerate the configuration references in docs/reference from the plugins' ConfigDefs
docs:
	$(GO) run ./cmd/connectd config-reference -dir docs/reference

## run: a worker in dev mode: embedded broker, REST on 127.0.0.1:8083, demo CDC data, sinks writing locally
run:
	$(GO) run ./cmd/connectd dev

## demo: the whole pipeline: dev mode's demo CDC into Iceberg and into a ClickHouse table on a local stand-in for a
## ClickHouse server (chDB behind the native-protocol test shim, test infrastructure), reconciled every 30 s
demo:
	scripts/demo-pipeline.sh

vet:
	$(GO) vet ./...

## lint: go vet and staticcheck (its checks and the JVM-exact messages it lets pass: staticcheck.conf); staticcheck
## runs at a pinned version through the Go proxy and is not a dependency of the module
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint: vet
	$(STATICCHECK) ./...

## bench: every Go benchmark (results and machine go to BENCHMARKS.md)
BENCHFLAGS ?= -run '^$$' -bench . -benchmem -count=1 -timeout 60m
bench:
	$(WITH_KAFKA) $(GO) test $(BENCHFLAGS) $(PKGS)

## fuzz: every fuzz target (decoders and parsers of untrusted input), FUZZTIME each; the REST bodies target runs
## through the whole HTTP handler and is ~100x slower per input, so it gets REST_FUZZTIME, and the targets of
## SLOW_FUZZ_TARGETS (10-30x slower per input) get SLOW_FUZZTIME
FUZZTIME ?= 30s
REST_FUZZTIME ?= $(FUZZTIME)
SLOW_FUZZTIME ?= $(FUZZTIME)
FUZZ_TARGETS := \
	./connect/jvm:FuzzParseJSON \
	./connect/values:FuzzParseText \
	./converters/jsonconv:FuzzJSONToConnect \
	./converters/jsonconv:FuzzJSONSameSchemaFastPath \
	./converters/jsonconv:FuzzSchemaless \
	./converters/jsonconv:FuzzSchemalessMembers \
	./converters/header:FuzzSimpleHeaderToConnect \
	./converters/avro:FuzzAvroToConnect \
	./converters/avro:FuzzAvroSchemaToConnect \
	./converters/avro:FuzzAvroSchemaWithReferences \
	./connectors/iceberg/icetable:FuzzJSONValueRow \
	./connectors/iceberg/icerow:FuzzJSONKeyShape \
	./connectors/iceberg/icerow:FuzzVersionEncoding \
	./connectors/iceberg/icerow:FuzzJSONDecimal \
	./connectors/iceberg/icetable:FuzzJSONRoundRows \
	./connectors/iceberg/commit/apacheevents:FuzzDecode \
	./connectors/iceberg/scd:FuzzHistoryRow \
	./connectors/clickhouse:FuzzSourcePositions \
	./connectors/clickhouse/chtype:FuzzParse \
	./internal/configprovider:FuzzTransform \
	./internal/lz4frame:FuzzLZ4Frame \
	./connect:FuzzParseConfigValue \
	./connect:FuzzParseType \
	./connect/values:FuzzParseJavaFloat \
	./connect/transforms:FuzzJavaDatePattern \
	./connect/transforms:FuzzJavaDateRoundTrip \
	./connect/transforms:FuzzParseValueString \
	./connectors/clickhouse/chtype:FuzzSplit \
	./internal/group:FuzzDecodeAssignment \
	./internal/group:FuzzDecodeMetadata \
	./internal/props:FuzzParse \
	./internal/store:FuzzParseTaskKey \
	./internal/store:FuzzConfigRecord \
	./connectors/clickhouse:FuzzParseConfig \
	./connectors/dlq:FuzzParseConfig \
	./converters/str:FuzzDecode \
	./converters/str:FuzzConfigure \
	./internal/logging:FuzzParseLevel
SLOW_FUZZ_TARGETS := \
	./connectors/iceberg/transforms:FuzzParseBSONDocument \
	./connectors/iceberg/transforms:FuzzParseJackson \
	./connectors/iceberg/commit:FuzzParseApacheOffsets \
	./connectors/iceberg/commit:FuzzConnectdPayload \
	./internal/herder:FuzzParseVersionRange \
	./internal/herder:FuzzMavenVersionCompare \
	./lakeops/reconcile:FuzzRecordKey \
	./connectors/iceberg:FuzzParseConfig \
	./connectors/iceberg/maintenance:FuzzParseActions \
	./connectors/iceberg/maintenance:FuzzParsePolicy \
	./lakeops/erase:FuzzParseConfig \
	./lakeops/erase:FuzzParseKey \
	./lakeops/erase:FuzzReadKeys \
	./lakeops/restoredrill:FuzzParseConfig
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  echo "fuzz $${t#*:} ($${t%%:*}, $(FUZZTIME))"; \
	  $(GO) test $${t%%:*} -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZTIME); \
	done
	@set -e; for t in $(SLOW_FUZZ_TARGETS); do \
	  echo "fuzz $${t#*:} ($${t%%:*}, $(SLOW_FUZZTIME))"; \
	  $(GO) test $${t%%:*} -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(SLOW_FUZZTIME); \
	done
	$(GO) test ./api -run '^$$' -fuzz '^FuzzRESTBodies$$' -fuzztime $(REST_FUZZTIME)

## test: all tests against one real Kafka broker (started and stopped around the run), then a bounded
## fuzz run of each target (CI_FUZZTIME each, CI_REST_FUZZTIME for the REST bodies). An execution count, not a duration: with a duration, Go 1.26's
## fuzz coordinator can fail a clean run with "context deadline exceeded" at the deadline (golang/go#75804).
CI_FUZZTIME ?= 30000x
CI_REST_FUZZTIME ?= 3000x
CI_SLOW_FUZZTIME ?= 3000x
## The CDC model test (test/cdcmodel), the reconcile end-to-end tests (test/e2e/lakeops) and the SCD model tests
## (connectors/iceberg/scd) run fixed seeds
## here so that a CI run is repeatable; `make soak` and a plain `go test` draw random seeds.
CI_CDC_SEED ?= 44
CI_RECONCILE_SEED ?= 1
CI_SCD_SEED ?= 1
test:
	CDC_SEED=$${CDC_SEED:-$(CI_CDC_SEED)} RECONCILE_SEED=$${RECONCILE_SEED:-$(CI_RECONCILE_SEED)} SCD_SEED=$${SCD_SEED:-$(CI_SCD_SEED)} $(WITH_KAFKA) $(GO) test $(TESTFLAGS) $(PKGS)
	$(MAKE) fuzz FUZZTIME=$(CI_FUZZTIME) REST_FUZZTIME=$(CI_REST_FUZZTIME) SLOW_FUZZTIME=$(CI_SLOW_FUZZTIME)

## soak: the CDC model test (test/cdcmodel) on N random streams per sink, in rounds of STREAMS (round r uses
## seed SEED+r) through one worker and one set of tables: make soak SEED=42 N=50000 [SINK=iceberg|iceberg-maintained|clickhouse]
SEED    ?= $(shell date +%s)
N       ?= 50000
STREAMS ?= 2000
KILLS   ?= 3
SINK    ?=
SOAK_RUN = $(if $(filter iceberg,$(SINK)),TestCDCModelIceberg$$,$(if $(filter iceberg-maintained,$(SINK)),TestCDCModelIcebergMaintained,$(if $(filter clickhouse,$(SINK)),TestCDCModelClickHouse,TestCDCModel)))
soak:
	CDC_SEED=$(SEED) CDC_TOTAL_STREAMS=$(N) CDC_STREAMS=$(STREAMS) CDC_KILLS=$(KILLS) \
		$(WITH_KAFKA) $(GO) test -count=1 -timeout 12h -v -run '^$(SOAK_RUN)' ./test/cdcmodel/

## test-jvm-baseline: the Iceberg mixed-cluster scenario on JVM workers alone (the Apache Iceberg sink 1.10.1
## under SIGKILL, no connectd): the reference for TestIcebergConnectorAcrossJVMAndGo, outside make test because
## that sink does not keep its own guarantee there in every run
test-jvm-baseline:
	ICEBERG_JVM_BASELINE=1 $(WITH_KAFKA) $(GO) test -count=1 -timeout 30m -v -run '^TestIcebergApacheSinkAloneBaseline$$' ./test/e2e/jvmmixed/

## test-handover: the Iceberg committer handover between a JVM worker (the Apache Iceberg sink 1.10.1) and a
## connectd worker, each side's committer SIGKILLed at least 3 times, the median held to one commit interval + 15 s;
## outside make test because it runs 5-8 minutes (TestIcebergConnectorAcrossJVMAndGo covers the handover in make test)
test-handover:
	ICEBERG_HANDOVER=1 $(WITH_KAFKA) $(GO) test -count=1 -timeout 30m -v -run '^TestIcebergCommitterHandover$$' ./test/e2e/jvmmixed/

## test-trino: the CDC model test's Iceberg tables (catalog on a private PostgreSQL) read by Trino's server
## (io.trino:trino-server from Maven Central, cached in ~/.cache/connectd; needs a JDK 24+, see scripts/trino.sh):
## rows equal to the model and, for every table, columns, types and rows equal to DuckDB's. Not part of make test
## (an 820 MB download and a JVM of 1 GB heap)
test-trino:
	CDC_SEED=$${CDC_SEED:-$(CI_CDC_SEED)} scripts/test-trino.sh

## test-s3: the Iceberg sink's and maintenance's S3 tests against SeaweedFS, a self-hosted object store built from
## its Go module (scripts/seaweedfs.sh, cached in ~/.cache/connectd; the first build takes minutes), instead of moto
test-s3:
	scripts/seaweedfs.sh fetch >/dev/null
	ICEBERG_S3_SERVER=seaweedfs $(WITH_KAFKA) $(GO) test -count=1 -timeout 30m -run 'S3' ./connectors/iceberg/ ./connectors/iceberg/maintenance/

## test-short: the tests that need no Kafka broker, chDB, DuckDB, JVM or built binary (they skip under -short and
## say why), in seconds to a minute, for the edit loop
test-short:
	$(GO) test -short -count=1 $(PKGS)

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
