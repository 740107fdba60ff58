package clickhouse

import "time"

// warnInterval is how often a per-table warning is repeated while its condition lasts.
const warnInterval = 10 * time.Minute

type tableWarning struct {
	last  time.Time
	count int64 // occurrences since the last log line
}

// warnTable logs msg for tbl the first time and then at most every warnInterval, with the number of
// records it concerned since the previous line.
func (t *Task) warnTable(tbl *tableInfo, kind, msg string) {
	key := tbl.db + "." + tbl.name + "\x00" + kind
	t.warnMu.Lock()
	w := t.tableWarnings[key]
	if w == nil {
		w = &tableWarning{}
		t.tableWarnings[key] = w
	}
	w.count++
	now := time.Now()
	if !w.last.IsZero() && now.Sub(w.last) < warnInterval {
		t.warnMu.Unlock()
		return
	}
	n := w.count
	w.last, w.count = now, 0
	t.warnMu.Unlock()
	t.log.Warn(msg, "table", tbl.db+"."+tbl.name, "records", n)
}
