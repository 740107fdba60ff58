package workerproc

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBinaryRefusesCallersOutsideTestTree: a package test that asks for the binary fails; a test under test/
// gets it.
func TestBinaryRefusesCallersOutsideTestTree(t *testing.T) {
	err := checkCaller(callerFuncs())
	require.Error(t, err, "a test of internal/testutil/workerproc may not run the binary")
	require.Contains(t, err.Error(), "only in tests under test/")

	require.NoError(t, checkCaller([]string{
		modulePath + "/internal/testutil/workerproc.Start",
		modulePath + "/test/e2e/iceberg.TestE2ESIGKILL.func2",
		"testing.tRunner",
	}))
	require.Error(t, checkCaller([]string{
		modulePath + "/internal/testutil/workerproc.Start",
		modulePath + "/connectors/iceberg.TestSomething",
		"testing.tRunner",
	}))
}

// libraryTrees are the trees whose tests run in-process: they build no binary and start no worker.
var libraryTrees = []string{"connect", "connectors", "converters", "internal"}

// TestLibraryTestsRunNoBinary: no test file of the library trees imports this harness or a test helper built on
// it, nor builds cmd/connectd itself.
func TestLibraryTestsRunNoBinary(t *testing.T) {
	root := RepoRoot()
	require.NotEmpty(t, root)
	harness := harnessPackages(t, root)
	require.Contains(t, harness, modulePath+"/internal/testutil/workerproc")

	var offenders []string
	for _, tree := range libraryTrees {
		err := filepath.WalkDir(filepath.Join(root, tree), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			if strings.HasPrefix(rel, filepath.Join("internal", "testutil")+string(filepath.Separator)) &&
				harness[modulePath+"/"+filepath.ToSlash(filepath.Dir(rel))] {
				return nil // the harness and the helpers built on it
			}
			isTest := strings.HasSuffix(path, "_test.go")
			inTestutil := strings.HasPrefix(rel, filepath.Join("internal", "testutil"))
			if !isTest && !inTestutil {
				return nil
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if strings.Contains(string(src), `"./cmd/connectd"`) || strings.Contains(string(src), `"`+modulePath+`/cmd/connectd"`) {
				offenders = append(offenders, rel+": builds cmd/connectd")
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if harness[p] {
					offenders = append(offenders, rel+": imports "+p)
				}
			}
			return nil
		})
		require.NoError(t, err)
	}
	sort.Strings(offenders)
	require.Empty(t, offenders, "tests that run the connectd binary belong under test/ (package tests stay in-process)")
}

// harnessPackages are this package and the packages of internal/testutil that import it, directly or through
// one another.
func harnessPackages(t *testing.T, root string) map[string]bool {
	imports := map[string][]string{}
	dir := filepath.Join(root, "internal", "testutil")
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := modulePath + "/" + filepath.ToSlash(rel)
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			imports[pkg] = append(imports[pkg], p)
		}
		return nil
	})
	require.NoError(t, err)
	harness := map[string]bool{modulePath + "/internal/testutil/workerproc": true}
	for grew := true; grew; {
		grew = false
		for pkg, imps := range imports {
			for _, p := range imps {
				if harness[p] && !harness[pkg] {
					harness[pkg], grew = true, true
				}
			}
		}
	}
	return harness
}
