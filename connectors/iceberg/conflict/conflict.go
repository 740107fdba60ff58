// Package conflict recognises an Iceberg commit that lost a race: the catalog refused it because the
// table's branch head is no longer the one the commit was built on. iceberg-go reports that as
// table.ErrCommitFailed (a REST 409, the SQL catalog's compare-and-set) or, for the requirements it checks
// itself (AssertRefSnapshotID and the like), as an untyped "requirement failed: ..." error. Of gives both
// one sentinel, in this one place, so that callers branch with errors.Is.
package conflict

import (
	"errors"
	"strings"

	"github.com/apache/iceberg-go/table"
)

// ErrHeadMoved matches a commit error that says the table changed under the commit: reload and retry.
var ErrHeadMoved = errors.New("the table's head moved under the commit")

// headMoved keeps the catalog's error and its text, and also matches ErrHeadMoved.
type headMoved struct{ err error }

func (e *headMoved) Error() string   { return e.err.Error() }
func (e *headMoved) Unwrap() []error { return []error{e.err, ErrHeadMoved} }

// Of returns a commit's error typed: one that says the table moved also matches ErrHeadMoved (its text
// unchanged); other errors, and nil, are returned as they are.
func Of(err error) error {
	if err == nil || errors.Is(err, ErrHeadMoved) {
		return err
	}
	if errors.Is(err, table.ErrCommitFailed) || strings.Contains(err.Error(), "requirement failed") {
		return &headMoved{err}
	}
	return err
}
