package scd

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

func recordReader(sc *arrow.Schema, rec arrow.RecordBatch) (array.RecordReader, error) {
	return array.NewRecordReader(sc, []arrow.RecordBatch{rec})
}
