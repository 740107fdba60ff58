package scd

import (
	"testing"

	"github.com/connectd/connectd/connectors/iceberg/icerow"
)

// FuzzHistoryRow: any payload, operation and version text of a history row is read without a panic;
// the whole-payload attribute is canonical (reading it again gives it back), so equal payloads hash
// equal; named attributes are strings or null.
func FuzzHistoryRow(f *testing.F) {
	f.Add(`{"id":1,"name":"ann"}`, "u", "100")
	f.Add(`{"name": "a\u00e9", "id": 1e3, "x": [1, {"b": null, "a": 2.50}]}`, "c", "mysql-bin.000001:4:0")
	f.Add(`null`, "d", "")
	f.Add(`[1,2]`, "tombstone", "00000027:00000758:0005")
	f.Add(`{"name":5}`, "r", "1:2")
	f.Fuzz(func(t *testing.T, payload, op, version string) {
		row := icerow.Row{icerow.RawPrimaryKey: `{"id":1}`, icerow.RawOperation: op, icerow.RawAfterPayload: payload,
			icerow.RawSourceVersion: version}
		for _, attrs := range [][]string{nil, {"name", "id"}} {
			e, ok, err := RawCDC.event(row, attrs)
			if err != nil || !ok || e.Deleted {
				continue
			}
			if attrs == nil {
				if c, isStr := e.Attrs[0].(string); isStr {
					again, err := canonicalJSON(c)
					if err != nil || again != c {
						t.Fatalf("canonical %q of %q reads back as %q (%v)", c, payload, again, err)
					}
				}
				continue
			}
			for _, a := range e.Attrs {
				if _, isStr := a.(string); a != nil && !isStr {
					t.Fatalf("attribute %#v of %q", a, payload)
				}
			}
			_ = Intervals([]Event{e, e}, attrs, Rules{SkipUnchanged: true, DeleteMarkers: true})
			_ = compareVersion(version, e.Version)
		}
	})
}
