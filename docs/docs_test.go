// Package docs holds the user and contributor documentation; its test keeps the Markdown readable.
package docs

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// clockRange finds session-log narration such as "(10:20-12:30 UTC)"; dates in result tables stay allowed.
var clockRange = regexp.MustCompile(`\b\d\d:\d\d ?[-–] ?\d\d:\d\d\b`)

// TestMarkdownReadable: no table cell in the repository's Markdown is over 300 characters (a longer cell is a
// paragraph and belongs below the table), no doc narrates clock times, and BENCHMARKS.md stays one current
// table per scenario (at most 300 lines).
func TestMarkdownReadable(t *testing.T) {
	root := ".."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "testdata", "node_modules", ".git", "vendor":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".md") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		n := 0
		for sc.Scan() {
			n++
			line := sc.Text()
			if strings.HasPrefix(strings.TrimSpace(line), "|") {
				for _, cell := range strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|") {
					if c := len([]rune(strings.TrimSpace(cell))); c > 300 {
						t.Errorf("%s:%d: a table cell of %d characters (at most 300)", path, n, c)
					}
				}
			}
			if m := clockRange.FindString(line); m != "" {
				t.Errorf("%s:%d: clock-time narration %q", path, n, m)
			}
		}
		if filepath.Base(path) == "BENCHMARKS.md" && n > 300 {
			t.Errorf("%s: %d lines (at most 300)", path, n)
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
}
