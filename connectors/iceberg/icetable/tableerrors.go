package icetable

import (
	"fmt"
)

// DataError marks a record that cannot be written into its table.
type DataError struct{ Err error }

func (e *DataError) Error() string { return e.Err.Error() }

func (e *DataError) Unwrap() error { return e.Err }

// TableDefError marks a table definition (identifier fields, partition spec, a schema to create it from) that
// cannot work: a retry cannot fix it.
type TableDefError struct{ Err error }

func (e *TableDefError) Error() string { return e.Err.Error() }

func (e *TableDefError) Unwrap() error { return e.Err }

func defErrorf(format string, args ...any) error { return &TableDefError{fmt.Errorf(format, args...)} }
