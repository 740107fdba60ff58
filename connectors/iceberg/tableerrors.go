package iceberg

import (
	"fmt"
)

// dataErr marks a record that cannot be written into its table.
type dataErr struct{ err error }

func (e *dataErr) Error() string { return e.err.Error() }

func (e *dataErr) Unwrap() error { return e.err }

// tableDefErr marks a table definition (identifier fields, partition spec, a schema to create it from) that
// cannot work: a retry cannot fix it.
type tableDefErr struct{ err error }

func (e *tableDefErr) Error() string { return e.err.Error() }

func (e *tableDefErr) Unwrap() error { return e.err }

func defErrorf(format string, args ...any) error { return &tableDefErr{fmt.Errorf(format, args...)} }
