package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

var lakeArgs = []string{"iceberg.catalog.type=sql", "iceberg.catalog.uri=jdbc:sqlite:/nonexistent/catalog.db", "iceberg.table=cdc.customers",
	"clickhouse.hostname=127.0.0.1", "clickhouse.database=shop", "clickhouse.table=customers"}

// The erase and restore-drill commands refuse incomplete invocations before touching any table.
func TestLakeCommandsArguments(t *testing.T) {
	run := func(fn func(context.Context, []string, *bytes.Buffer, *bytes.Buffer) int, args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := fn(context.Background(), args, &out, &errb)
		return code, errb.String()
	}
	erase := func(ctx context.Context, a []string, o, e *bytes.Buffer) int { return runErase(ctx, a, o, e) }
	drill := func(ctx context.Context, a []string, o, e *bytes.Buffer) int { return runRestoreDrill(ctx, a, o, e) }

	code, msg := run(erase, append([]string{}, append(lakeArgs, "key.columns=id")...)...)
	require.Equal(t, 2, code)
	require.Contains(t, msg, "no keys")
	code, msg = run(erase, append([]string{"-key", "x"}, append(lakeArgs, "key.columns=tenant,id")...)...)
	require.Equal(t, 2, code)
	require.Contains(t, msg, "JSON object")
	code, msg = run(erase, "-key", "x", "iceberg.table=cdc.customers")
	require.Equal(t, 2, code)
	require.Contains(t, msg, "usage: connectd erase")

	code, msg = run(drill, lakeArgs...)
	require.Equal(t, 2, code)
	require.Contains(t, msg, "drill.namespace is required")
	code, msg = run(drill, append(lakeArgs, "drill.namespace=drill", "drill.clickhouse.database=shop")...)
	require.Equal(t, 2, code)
	require.Contains(t, msg, "spare")
}
