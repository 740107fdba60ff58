package erase_test

import (
	"os"
	"testing"

	"github.com/connectd/connectd/internal/testutil/lakepipeline"
)

func TestMain(m *testing.M) {
	code := m.Run()
	lakepipeline.Close()
	os.Exit(code)
}
