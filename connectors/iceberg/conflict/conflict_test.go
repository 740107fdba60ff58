package conflict

import (
	"errors"
	"fmt"
	"testing"

	"github.com/apache/iceberg-go/table"
)

func TestOf(t *testing.T) {
	other := errors.New("connection refused")
	for _, c := range []struct {
		name  string
		err   error
		moved bool
	}{
		{"nil", nil, false},
		{"commit failed", fmt.Errorf("%w: branch main has changed", table.ErrCommitFailed), true},
		{"requirement failed", errors.New("requirement failed: branch main has changed: expected id 1, found 2"), true},
		{"wrapped requirement", fmt.Errorf("commit: %w", errors.New("requirement failed: current table metadata does not exist")), true},
		{"other", other, false},
		{"typed twice", Of(errors.New("requirement failed: x")), true},
	} {
		got := Of(c.err)
		if errors.Is(got, ErrHeadMoved) != c.moved {
			t.Errorf("%s: errors.Is(Of(err), ErrHeadMoved) = %v, want %v", c.name, !c.moved, c.moved)
		}
		if c.err == nil {
			if got != nil {
				t.Errorf("Of(nil) = %v", got)
			}
			continue
		}
		if got.Error() != c.err.Error() {
			t.Errorf("%s: text %q, want %q", c.name, got.Error(), c.err.Error())
		}
		if !errors.Is(got, c.err) {
			t.Errorf("%s: the catalog's error is not kept", c.name)
		}
	}
	if errors.Is(Of(other), table.ErrCommitFailed) {
		t.Error("an unrelated error matches table.ErrCommitFailed")
	}
	if !errors.Is(Of(fmt.Errorf("%w", table.ErrCommitFailed)), table.ErrCommitFailed) {
		t.Error("table.ErrCommitFailed is lost")
	}
}
