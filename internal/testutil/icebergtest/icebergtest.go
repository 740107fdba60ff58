// Package icebergtest holds test helpers for the Iceberg sink: the independent reader
// (DuckDB + iceberg extension, from PyPI) and a real S3-compatible server (moto, from PyPI)
// run as a separate process.
package icebergtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/connectd/connectd/internal/testutil/repo"
)

var (
	setupOnce sync.Once
	python    string
	setupErr  error
)

// RepoRoot finds the module root (the directory holding go.mod).
func RepoRoot() string { return repo.Root() }

// Python returns the venv python with duckdb, its extensions and moto, installing on first use.
func Python(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the DuckDB reader (a Python venv): skipped under -short")
	}
	setupOnce.Do(func() {
		cmd := exec.Command("bash", filepath.Join(RepoRoot(), "scripts", "iceberg-reader-setup.sh"))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			setupErr = fmt.Errorf("iceberg-reader-setup.sh: %v: %s", err, stderr.String())
			return
		}
		python = strings.TrimSpace(string(out))
	})
	if setupErr != nil {
		t.Fatalf("independent reader unavailable: %v", setupErr)
	}
	return python
}

// S3 describes a running S3-compatible server.
type S3 struct {
	Endpoint, Key, Secret, Region string
}

// Result is what the reader returns.
type Result struct {
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
}

// Maps returns rows as column->value maps.
func (r Result) Maps() []map[string]any {
	out := make([]map[string]any, len(r.Rows))
	for i, row := range r.Rows {
		m := make(map[string]any, len(row))
		for j, c := range r.Columns {
			m[c] = row[j]
		}
		out[i] = m
	}
	return out
}

// Read runs SQL (the table is `t`) over the Iceberg table at metadataLocation with DuckDB.
func Read(t testing.TB, metadataLocation, query string, s3 *S3) Result {
	t.Helper()
	py := Python(t)
	args := []string{filepath.Join(RepoRoot(), "testdata", "iceberg", "reader", "duckdb_read.py"), metadataLocation, "--query", query}
	if s3 != nil {
		args = append(args, "--s3-endpoint", s3.Endpoint, "--s3-key", s3.Key, "--s3-secret", s3.Secret, "--s3-region", s3.Region)
	}
	cmd := exec.Command(py, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("duckdb reader failed: %v\n%s", err, stderr.String())
	}
	var res Result
	d := json.NewDecoder(bytes.NewReader(out))
	d.UseNumber()
	if err := d.Decode(&res); err != nil {
		t.Fatalf("reader output: %v: %s", err, out)
	}
	return res
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// S3ServerEnv picks the S3-compatible server of StartS3: "seaweedfs" for SeaweedFS (scripts/seaweedfs.sh, a
// self-hosted object store), anything else for moto (a Python S3 stand-in from PyPI).
const S3ServerEnv = "ICEBERG_S3_SERVER"

// StartS3 starts an S3-compatible server process on a loopback port (moto, or SeaweedFS when S3ServerEnv says
// so), creates bucket with a signed request, and stops the server at test cleanup.
func StartS3(t testing.TB, bucket string) *S3 {
	t.Helper()
	var s3 *S3
	if os.Getenv(S3ServerEnv) == "seaweedfs" {
		s3 = startSeaweedFS(t)
	} else {
		s3 = startMoto(t)
	}
	if err := createBucket(s3, bucket); err != nil {
		t.Fatalf("create bucket %s: %v", bucket, err)
	}
	return s3
}

func startMoto(t testing.TB) *S3 {
	py := Python(t)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	moto := filepath.Join(filepath.Dir(py), "moto_server")
	cmd := exec.Command(moto, "-H", "127.0.0.1", "-p", fmt.Sprint(port))
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test")
	logf, _ := os.Create(filepath.Join(t.TempDir(), "moto.log"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start moto_server: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	ep := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(ep + "/")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("moto_server did not start: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return &S3{Endpoint: ep, Key: "test", Secret: "test", Region: "us-east-1"}
}

func startSeaweedFS(t testing.TB) *S3 {
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := filepath.Join(RepoRoot(), "scripts", "seaweedfs.sh")
	if out, err := exec.Command("bash", script, "start", dir, fmt.Sprint(port)).CombinedOutput(); err != nil {
		t.Fatalf("start SeaweedFS: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("bash", script, "stop", dir).Run() })
	return &S3{Endpoint: fmt.Sprintf("http://127.0.0.1:%d", port), Key: "test", Secret: "test", Region: "us-east-1"}
}

// createBucket sends a SigV4-signed PUT Bucket, as a server that checks credentials requires.
func createBucket(s3 *S3, bucket string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, err := http.NewRequest(http.MethodPut, s3.Endpoint+"/"+bucket, nil)
		if err != nil {
			return err
		}
		const emptyPayload = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
		req.Header.Set("X-Amz-Content-Sha256", emptyPayload)
		creds := aws.Credentials{AccessKeyID: s3.Key, SecretAccessKey: s3.Secret}
		if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, emptyPayload, "s3", s3.Region, time.Now()); err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				return nil
			}
			err = fmt.Errorf("%s: %s", resp.Status, body)
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(500 * time.Millisecond) // a fresh SeaweedFS needs its filer before buckets
	}
}

// Postgres is a PostgreSQL server started by scripts/iceberg-postgres.sh.
type Postgres struct {
	Dir  string
	Port int
}

// JDBCURI is the catalog uri as a JVM sink config would write it.
func (p *Postgres) JDBCURI() string {
	return fmt.Sprintf("jdbc:postgresql://127.0.0.1:%d/postgres", p.Port)
}

// Start (re)starts the server.
func (p *Postgres) Start(t testing.TB) {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join(RepoRoot(), "scripts", "iceberg-postgres.sh"), "start", p.Dir, fmt.Sprint(p.Port))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("start postgres: %v\n%s", err, out)
	}
}

// Stop stops the server (fast shutdown).
func (p *Postgres) Stop(t testing.TB) {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join(RepoRoot(), "scripts", "iceberg-postgres.sh"), "stop", p.Dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("stop postgres: %v\n%s", err, out)
	}
}

// StartPostgres starts a private PostgreSQL on a free loopback port, stopped at cleanup.
func StartPostgres(t testing.TB) *Postgres {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a PostgreSQL server: skipped under -short")
	}
	base, err := os.MkdirTemp("", "iceberg-pg")
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(base, 0o755) // the server runs as the postgres user
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	p := &Postgres{Dir: filepath.Join(base, "data"), Port: port}
	p.Start(t)
	t.Cleanup(func() {
		p.Stop(t)
		_ = os.RemoveAll(base)
	})
	return p
}

// StartRESTCatalog runs Apache Iceberg's RESTCatalogServer (Java, from Maven Central) on a
// loopback port with its warehouse in dir, and returns its URI; killed at cleanup.
func StartRESTCatalog(t testing.TB, dir string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the JVM REST catalog server: skipped under -short")
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", filepath.Join(RepoRoot(), "scripts", "iceberg-rest-server.sh"), fmt.Sprint(port),
		filepath.Join(dir, "warehouse"), filepath.Join(dir, "rest-catalog.db"))
	logf, _ := os.Create(filepath.Join(dir, "rest-server.log"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start REST catalog: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	uri := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(5 * time.Minute) // the first run downloads the jars
	for {
		resp, err := http.Get(uri + "/v1/config")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return uri
			}
		}
		if cmd.ProcessState != nil || time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "rest-server.log"))
			t.Fatalf("REST catalog did not start: %v\n%s", err, b)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// FilesHolding reads each Parquet file directly with DuckDB, without applying any Iceberg delete,
// and returns how many of its rows hold value in a string cell (the whole cell, or a JSON string
// inside it, as in the raw history's payloads); every file is in the map. It is what an erasure must
// reach: a row hidden by a delete file is still in its data file.
func FilesHolding(t testing.TB, value string, files []string) map[string]int {
	t.Helper()
	if len(files) == 0 {
		return map[string]int{}
	}
	py := Python(t)
	args := append([]string{filepath.Join(RepoRoot(), "testdata", "iceberg", "reader", "parquet_grep.py"), value}, files...)
	cmd := exec.Command(py, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("parquet_grep.py failed: %v\n%s", err, stderr.String())
	}
	res := map[string]int{}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("parquet_grep.py output: %v: %s", err, out)
	}
	return res
}
