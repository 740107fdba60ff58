package reconcile

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/clickhouse"
	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// Rebuild keys (besides the reconcile ones).
const (
	KeyRebuildSnapshot  = "rebuild.snapshot-id"   // Iceberg snapshot to load (default: the current one)
	KeyRebuildCreateSQL = "rebuild.create.sql"    // CREATE TABLE {table} ... used when the target does not exist
	KeyRebuildBatchRows = "rebuild.batch.rows"    // rows per INSERT (default 100000)
	KeyWindowColumn     = "rebuild.window.column" // rebuild only rows whose column is in [from, to)
	KeyWindowFrom       = "rebuild.window.from"
	KeyWindowTo         = "rebuild.window.to"
)

// RebuildOptions are the rebuild settings parsed from the properties.
type RebuildOptions struct {
	SnapshotID int64
	CreateSQL  string
	BatchRows  int
	Window     *Window
}

// Window restricts a rebuild to the rows whose column lies in [From, To), given as the column's values
// (integers, strings, dates as 2006-01-02, timestamps as RFC 3339).
type Window struct {
	Column, From, To string
}

// ParseRebuildOptions reads the rebuild.* properties.
func ParseRebuildOptions(props map[string]string) (RebuildOptions, error) {
	o := RebuildOptions{BatchRows: 100000, CreateSQL: strings.TrimSpace(props[KeyRebuildCreateSQL])}
	if v := strings.TrimSpace(props[KeyRebuildSnapshot]); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return o, fmt.Errorf("%s=%q: want a snapshot id", KeyRebuildSnapshot, v)
		}
		o.SnapshotID = n
	}
	if v := strings.TrimSpace(props[KeyRebuildBatchRows]); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return o, fmt.Errorf("%s=%q: want a positive number", KeyRebuildBatchRows, v)
		}
		o.BatchRows = n
	}
	if c := strings.TrimSpace(props[KeyWindowColumn]); c != "" {
		o.Window = &Window{Column: c, From: strings.TrimSpace(props[KeyWindowFrom]), To: strings.TrimSpace(props[KeyWindowTo])}
		if o.Window.From == "" && o.Window.To == "" {
			return o, fmt.Errorf("%s needs %s and/or %s", KeyWindowColumn, KeyWindowFrom, KeyWindowTo)
		}
	}
	return o, nil
}

// RebuildResult says what a rebuild did.
type RebuildResult struct {
	SnapshotID int64 `json:"snapshot_id"`
	Rows       int64 `json:"rows"`
	// KeptRows were copied from the old table (outside the window).
	KeptRows int64   `json:"kept_rows"`
	Seconds  float64 `json:"seconds"`
	// Offsets are the Kafka next offsets the snapshot holds: the ClickHouse connector resumes from them.
	Offsets map[string]int64 `json:"offsets"`
}

// StageTable is the table a rebuild of table loads before swapping it in.
func StageTable(table string) string { return table + "__rebuild" }

// Rebuild reloads the ClickHouse table from an Iceberg snapshot through the ClickHouse sink's own row
// mapping. The rows go into a staging table created like the target (dropped and created afresh on every
// run, so a run that was killed and is run again gives the same table), which is then swapped in with
// EXCHANGE TABLES (RENAME when the target does not exist); the old contents are dropped. With a window,
// the staging table first receives the stored rows of the target outside the window, so only the window
// changes. The sink's exactly-once state of the table is set to the snapshot's offsets; progress lines go
// to progress (nil: none).
func Rebuild(ctx context.Context, cfg *Config, opt RebuildOptions, progress io.Writer) (*RebuildResult, error) {
	start := time.Now()
	lake, err := openLake(ctx, cfg)
	if err != nil {
		return nil, err
	}
	snap := lake.tbl.CurrentSnapshot()
	if opt.SnapshotID != 0 {
		if snap = lake.tbl.SnapshotByID(opt.SnapshotID); snap == nil {
			return nil, fmt.Errorf("iceberg: %s has no snapshot %d", cfg.IcebergTable, opt.SnapshotID)
		}
	}
	if snap == nil {
		return nil, fmt.Errorf("iceberg: %s has no snapshot", cfg.IcebergTable)
	}
	conn, err := dialClickHouse(ctx, cfg.CH, "connectd-rebuild")
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	db := cfg.CH.Database
	target := quoteIdent(db) + "." + quoteIdent(cfg.CHTable)
	stage := quoteIdent(db) + "." + quoteIdent(StageTable(cfg.CHTable))
	exists, err := conn.rows(ctx, "SELECT CAST(count() AS Nullable(String)) FROM system.tables WHERE database = "+quoteString(db)+" AND name = "+quoteString(cfg.CHTable), 1)
	if err != nil {
		return nil, err
	}
	targetExists := exists[0][0] != "0"
	if err := conn.exec(ctx, "DROP TABLE IF EXISTS "+stage+" SYNC"); err != nil {
		return nil, err
	}
	switch {
	case targetExists:
		err = conn.exec(ctx, "CREATE TABLE "+stage+" AS "+target)
	case opt.CreateSQL != "":
		err = conn.exec(ctx, strings.ReplaceAll(opt.CreateSQL, "{table}", stage))
	default:
		return nil, fmt.Errorf("clickhouse: %s does not exist: give its CREATE TABLE statement in %s (with {table} for the name)", target, KeyRebuildCreateSQL)
	}
	if err != nil {
		return nil, err
	}
	p := &pair{cfg: cfg, lake: lake, ch: conn, report: &Report{}}
	p.atOldSchema = lake.useSchemaOf(snap) // the snapshot's rows have its schema's columns
	if p.chTable, err = conn.describe(ctx, db, StageTable(cfg.CHTable)); err != nil {
		return nil, err
	}
	if err := p.decideColumns(); err != nil {
		return nil, err
	}
	res := &RebuildResult{SnapshotID: snap.SnapshotID, Offsets: map[string]int64{}}
	var win *windowFilter
	if opt.Window != nil {
		if !targetExists {
			return nil, fmt.Errorf("a window rebuild needs the target table %s", target)
		}
		if win, err = p.newWindowFilter(*opt.Window); err != nil {
			return nil, err
		}
		if err := conn.exec(ctx, "INSERT INTO "+stage+" SELECT * FROM "+target+" WHERE NOT ("+win.sql+")"); err != nil {
			return nil, err
		}
		kept, err := conn.rows(ctx, "SELECT CAST(count() AS Nullable(String)) FROM "+stage, 1)
		if err != nil {
			return nil, err
		}
		res.KeptRows, _ = strconv.ParseInt(kept[0][0], 10, 64)
	}
	n, err := p.load(ctx, snap.SnapshotID, StageTable(cfg.CHTable), opt.BatchRows, win, progress, start)
	if err != nil {
		return nil, err
	}
	res.Rows = n
	if targetExists {
		err = conn.exec(ctx, "EXCHANGE TABLES "+target+" AND "+stage)
	} else {
		err = conn.exec(ctx, "RENAME TABLE "+stage+" TO "+target)
	}
	if err != nil {
		return nil, err
	}
	if err := conn.exec(ctx, "DROP TABLE IF EXISTS "+stage+" SYNC"); err != nil {
		return nil, err
	}
	offsets, err := lake.offsetsAt(snap)
	if err != nil {
		return nil, err
	}
	for k, v := range offsets {
		res.Offsets[k.String()] = v
	}
	if err := conn.setState(ctx, db, cfg.CHTable, offsets); err != nil {
		return nil, err
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// load writes the snapshot's live rows (those in the window) into table through the ClickHouse sink.
func (p *pair) load(ctx context.Context, snapshotID int64, table string, batch int, win *windowFilter, progress io.Writer, start time.Time) (int64, error) {
	props := map[string]string{}
	for k, v := range p.cfg.CHProps {
		props[k] = v
	}
	const topic = "rebuild"
	props["topics"] = topic
	props["topic2TableMap"] = topic + "=" + table
	props["debeziumCDCEnabled"] = "false"
	props["exactlyOnce"] = "false"
	props["auto.create.tables"] = "false"
	props["auto.evolve"] = "false"
	props["batch.max.rows"] = strconv.Itoa(batch)
	task := &clickhouse.Task{}
	task.Initialize(&rebuildContext{props: props})
	if err := task.Start(props); err != nil {
		return 0, fmt.Errorf("clickhouse sink: %w", err)
	}
	defer task.Stop()
	tpart := connect.TopicPartition{Topic: topic, Partition: 0}
	if err := task.Open([]connect.TopicPartition{tpart}); err != nil {
		return 0, err
	}
	names := []string{}
	for _, c := range p.chTable.columns {
		if _, ok := p.lake.field(c); ok && c != p.iceVer {
			names = append(names, c)
		}
	}
	if p.iceVer != "" {
		names = append(names, p.iceVer)
	}
	recs := make([]*connect.SinkRecord, 0, batch)
	var n int64
	var last time.Time
	flush := func() error {
		if len(recs) == 0 {
			return nil
		}
		if err := task.Put(ctx, recs); err != nil {
			return fmt.Errorf("clickhouse sink: %w", err)
		}
		recs = recs[:0]
		if progress != nil && time.Since(last) > 200*time.Millisecond {
			last = time.Now()
			el := time.Since(start).Seconds()
			fmt.Fprintf(progress, "\rrebuild: %d rows, %.0f rows/s ", n, float64(n)/max(el, 1e-9))
		}
		return nil
	}
	for row, err := range icetable.LiveRows(ctx, p.lake.tbl, snapshotID, names) {
		if err != nil {
			return n, err
		}
		if win != nil {
			in, err := win.contains(row)
			if err != nil {
				return n, err
			}
			if !in {
				continue
			}
		}
		v := make(map[string]any, len(row)+1)
		for k, x := range row {
			v[k] = sinkValue(x)
		}
		if p.iceVer != "" && p.chVer != "" {
			delete(v, p.iceVer)
			if ver := versionText(row[p.iceVer]); ver != "" {
				v[p.chVer] = ver
			}
		}
		recs = append(recs, &connect.SinkRecord{Topic: topic, Partition: 0, Offset: n, Value: v,
			Timestamp: connect.NoTimestamp, OriginalTopic: topic, OriginalOffset: n})
		n++
		if len(recs) == batch {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	if err := flush(); err != nil {
		return n, err
	}
	if err := task.Flush(ctx, nil); err != nil {
		return n, fmt.Errorf("clickhouse sink: %w", err)
	}
	if progress != nil {
		el := time.Since(start).Seconds()
		fmt.Fprintf(progress, "\rrebuild: %d rows, %.0f rows/s\n", n, float64(n)/max(el, 1e-9))
	}
	return n, nil
}

// sinkValue turns an Iceberg value into the Connect value a record would carry for it.
func sinkValue(v any) any {
	switch x := v.(type) {
	case icerow.Decimal:
		return connect.Decimal{Unscaled: x.Unscaled, Scale: x.Scale}
	case uuid.UUID:
		return x.String()
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = sinkValue(e)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = sinkValue(e)
		}
		return out
	}
	return v
}

// rebuildContext is the sink task's runtime during a rebuild: no consumer behind it.
type rebuildContext struct{ props map[string]string }

func (c *rebuildContext) Configs() map[string]string                         { return c.props }
func (c *rebuildContext) Offset(map[connect.TopicPartition]int64)            {}
func (c *rebuildContext) Timeout(time.Duration)                              {}
func (c *rebuildContext) Assignment() []connect.TopicPartition               { return nil }
func (c *rebuildContext) Pause(...connect.TopicPartition)                    {}
func (c *rebuildContext) Resume(...connect.TopicPartition)                   {}
func (c *rebuildContext) RequestCommit()                                     {}
func (c *rebuildContext) ErrantRecordReporter() connect.ErrantRecordReporter { return nil }
