package commit

import (
	"context"
	"errors"
	"fmt"
	"testing"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// isFatal decides by type whether a failed table round is retried or fails the task.
func TestIsFatalByType(t *testing.T) {
	sc := ice.NewSchema(0,
		ice.NestedField{ID: 1, Name: "id", Type: ice.PrimitiveTypes.Int64, Required: false},
		ice.NestedField{ID: 2, Name: "score", Type: ice.PrimitiveTypes.Float64, Required: true},
	)
	_, specErr := icetable.BuildPartitionSpec(sc, []string{"weekday(id)"})
	fatal := map[string]error{
		"optional identifier field": icetable.ValidateIdentifierFields(sc, []string{"id"}),
		"float identifier field":    icetable.ValidateIdentifierFields(sc, []string{"score"}),
		"missing identifier field":  icetable.ValidateIdentifierFields(sc, []string{"nope"}),
		"unknown partition":         specErr,
		"bad record":                &icetable.DataError{Err: errors.New("value does not fit")},
	}
	for name, err := range fatal {
		require.Error(t, err, name)
		require.True(t, isFatal(fmt.Errorf("table db.t: %w", err)), "%s: %v", name, err)
	}
	for name, err := range map[string]error{
		"fenced":              fmt.Errorf("%w: head moved", icetable.ErrFenced),
		"commit failed":       fmt.Errorf("catalog: %w", table.ErrCommitFailed),
		"deadline":            context.DeadlineExceeded,
		"catalog unreachable": errors.New("dial tcp 127.0.0.1:1: connect: connection refused"),
		"names a field":       errors.New("identifier field lookup timed out"), // text alone no longer decides
	} {
		require.False(t, isFatal(err), "%s: %v", name, err)
	}
}
