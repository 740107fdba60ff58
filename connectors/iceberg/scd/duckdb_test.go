package scd

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"

	"github.com/connectd/connectd/internal/testutil/icebergtest"
)

// leadQuery is the SCD Type 2 definition over the raw history as SQL: each distinct version of a
// key is valid from its valid_from to the next version's (LEAD ordered by the source version, a
// Postgres LSN here); the key's newest version is current unless it is a delete; deletes only
// close the interval before them (without markers).
func leadQuery(markers bool) string {
	where := "operation <> 'd'"
	if markers {
		where = "true"
	}
	return `WITH v AS (
  SELECT DISTINCT primary_key, source_version, operation, COALESCE(source_timestamp, kafka_timestamp) AS vf
  FROM t WHERE source_version IS NOT NULL AND operation NOT IN ('tombstone', 't')),
w AS (
  SELECT *, LEAD(vf) OVER (PARTITION BY primary_key ORDER BY CAST(source_version AS BIGINT)) AS vt,
    ROW_NUMBER() OVER (PARTITION BY primary_key ORDER BY CAST(source_version AS BIGINT) DESC) AS rn
  FROM v)
SELECT primary_key, source_version, CAST(epoch_ms(vf) AS VARCHAR), COALESCE(CAST(epoch_ms(vt) AS VARCHAR), '-'),
  rn = 1 AND operation <> 'd', ` + fmt.Sprint(markers) + ` AND operation = 'd'
FROM w WHERE ` + where
}

// scdQuery reads the SCD table in the model's line format.
func scdQuery(cfg scdConfig) string {
	deleted, attrs := "false", "attributes"
	if cfg.DeleteMarkers {
		deleted = "is_deleted"
	}
	if cfg.Named {
		attrs = "name || ',' || COALESCE(tier, '<null>')"
	}
	return `SELECT business_key, source_version, COALESCE(CAST(epoch_ms(valid_from) AS VARCHAR), '-'),
  COALESCE(CAST(epoch_ms(valid_to) AS VARCHAR), '-'), is_current, ` + deleted + `,
  CASE WHEN ` + deleted + ` THEN '-' ELSE ` + attrs + ` END FROM t`
}

// cut keeps the first n fields of "a|b|c" lines.
func cut(lines []string, n int) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.Join(strings.SplitN(l, "|", n+1)[:n], "|")
	}
	slices.Sort(out)
	return out
}

// TestSCDMatchesDuckDBLead: the model run with DuckDB as the second reader. After every run whose
// history did not move since its plan, the SCD table (read by iceberg-go and by DuckDB, deletes
// applied by each) equals the LEAD(valid_from) OVER (PARTITION BY key ORDER BY source_version)
// query that DuckDB's iceberg reader computes over the raw history. Versions are never skipped
// here (the query keeps unchanged versions too).
func TestSCDMatchesDuckDBLead(t *testing.T) {
	icebergtest.Python(t)
	base, n := scdSeeds(t, 4)
	config := func(s int64) scdConfig {
		cfg := seedConfig(s)
		cfg.SkipUnchanged = false
		return cfg
	}
	checked := 0
	modelSeeds(t, base, n, config, func(cfg scdConfig) func(catalog.Catalog, []histEvent, Report) error {
		return func(cat catalog.Catalog, _ []histEvent, rep Report) error {
			ctx := context.Background()
			hist, err := cat.LoadTable(ctx, historyIdent)
			if err != nil {
				return err
			}
			if s := hist.CurrentSnapshot(); s == nil || s.SnapshotID != rep.To.SnapshotID {
				return nil // an append raced the run: the query would see rows the run did not
			}
			tbl, err := cat.LoadTable(ctx, scdIdent)
			if err != nil {
				return err
			}
			goRows, err := scdLines(ctx, tbl, cfg)
			if err != nil {
				return err
			}
			duck := icebergtest.DuckRows(t, tbl.MetadataLocation(), scdQuery(cfg))
			if !slices.Equal(duck, goRows) {
				return fmt.Errorf("DuckDB reads the SCD table as\n%s\niceberg-go as\n%s", strings.Join(duck, "\n"), strings.Join(goRows, "\n"))
			}
			lead := icebergtest.DuckRows(t, hist.MetadataLocation(), leadQuery(cfg.DeleteMarkers))
			if got := cut(goRows, 6); !slices.Equal(got, lead) {
				return fmt.Errorf("SCD table differs from DuckDB's LEAD over the history\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(lead, "\n      "))
			}
			checked++
			return nil
		}
	})
	if checked == 0 {
		t.Fatal("no run was compared with DuckDB")
	}
	t.Logf("%d runs compared with DuckDB", checked)
}
