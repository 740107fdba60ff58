package scd

import (
	"fmt"
	"slices"

	"github.com/apache/iceberg-go/table"

	"github.com/connectd/connectd/connectors/iceberg/icerow"
)

// Source names the columns of the history table.
type Source struct {
	KeyColumn       string // the business key (the raw history's primary_key, the key as JSON)
	VersionColumn   string // the position of the change in the source log
	ValidFromColumn string // when the version became valid at the source
	// ValidFromFallback is read when ValidFromColumn is null (the raw history's kafka_timestamp).
	ValidFromFallback string
	// OpColumn holds the operation: "d" (or "delete", "D") deletes the key; "tombstone" and "t"
	// (truncate) rows are ignored; anything else is a version of the key. "": every row is a version.
	OpColumn string
	// PayloadColumn holds the row image as a JSON object (the raw history's after_payload); the
	// attributes are its members. "": the attributes are columns of the history table.
	PayloadColumn string
	// DeliveryColumns order the rows of one key and version (the last wins): partition and offset.
	DeliveryColumns []string
}

// RawCDC is the sink's raw CDC history model (iceberg.table.<t>.raw-cdc=true).
var RawCDC = Source{
	KeyColumn:         icerow.RawPrimaryKey,
	VersionColumn:     icerow.RawSourceVersion,
	ValidFromColumn:   icerow.RawSourceTimestamp,
	ValidFromFallback: icerow.RawKafkaTimestamp,
	OpColumn:          icerow.RawOperation,
	PayloadColumn:     icerow.RawAfterPayload,
	DeliveryColumns:   []string{icerow.RawKafkaPartition, icerow.RawKafkaOffset},
}

// Options configure the materialization of one SCD table.
type Options struct {
	History table.Identifier // the history table read
	Target  table.Identifier // the SCD table written (created when missing)
	Source  Source           // zero value: RawCDC
	// Attributes are the attribute columns of the SCD table (strings: a JSON string member as it
	// is, other values as JSON). Empty: one column `attributes` holding the whole payload as JSON.
	Attributes []string
	Rules
	// TargetFileSize of the data files written; 0 takes the table's write.target-file-size-bytes.
	TargetFileSize int64
}

func (o *Options) source() Source {
	if o.Source.KeyColumn == "" {
		return RawCDC
	}
	return o.Source
}

// attrNames are the attribute columns of the SCD table.
func (o *Options) attrNames() []string {
	if len(o.Attributes) == 0 {
		return []string{ColAttributes}
	}
	return o.Attributes
}

func (o *Options) validate() error {
	s := o.source()
	if len(o.History) == 0 || len(o.Target) == 0 {
		return fmt.Errorf("scd: history and target tables are required")
	}
	if s.VersionColumn == "" {
		return fmt.Errorf("scd: the history's version column is required")
	}
	if s.PayloadColumn == "" && len(o.Attributes) == 0 {
		return fmt.Errorf("scd: attributes must be named when the history has no payload column")
	}
	reserved := []string{ColBusinessKey, ColValidFrom, ColValidTo, ColIsCurrent, ColSourceVersion, ColRecordHash, ColIsDeleted}
	for i, a := range o.Attributes {
		if a == "" || slices.Contains(reserved, a) || slices.Contains(o.Attributes[:i], a) {
			return fmt.Errorf("scd: attribute %q: empty, repeated or an SCD column's name", a)
		}
	}
	return nil
}
