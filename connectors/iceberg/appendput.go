package iceberg

import (
	"context"
	"errors"

	ice "github.com/apache/iceberg-go"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// appendTarget returns the task's append state of a table when rows of record schema st can be
// spooled into it now (icetable.AppendTables), else nil. The error is a data error when the table
// cannot take the record schema. Caller holds t.mu.
func (t *Task) appendTarget(ctx context.Context, name string, o icetable.TableOptions, st *ice.StructType) (*icetable.AppendTable, error) {
	a, err := t.appends.Target(ctx, t.now(), name, o, st)
	if err != nil {
		return nil, connect.DataErrorf("iceberg table %s: record schema does not fit the table: %v", name, err)
	}
	return a, nil
}

// spoolRow appends one row to the table's open segment of tp, opening one when needed. It
// returns a data error for a row whose values do not fit the table's columns. Caller holds t.mu.
func (t *Task) spoolRow(name string, a *icetable.AppendTable, tp icetable.TP, off int64, row icerow.Row) error {
	s, opened, err := t.appends.Segment(a, tp)
	if err != nil {
		return err
	}
	if opened {
		t.buf[name] = append(t.buf[name], icetable.Rec{Op: icerow.OpInsert, TP: tp, Offset: off, Seg: s})
	}
	t.nbuf++
	t.appends.Rows++
	if err := s.Add(row, off); err != nil {
		var de *icetable.DataError
		if errors.As(err, &de) {
			return connect.DataErrorf("iceberg table %s: %v", name, err)
		}
		return err
	}
	return nil
}
