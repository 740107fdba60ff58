package commit

import (
	"fmt"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/codec"
	"github.com/apache/iceberg-go/table"

	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// The control messages (JSON) and the encoding of prepared parts in them.

const (
	ctlStart   = "start"
	ctlData    = "data"   // a process's answer: its files and drained positions (once per round)
	ctlAssign  = "assign" // a repeated answer: only the partitions held now (coverage, never included)
	ctlCommit  = "commit"
	ctlRequest = "request" // a process whose buffers are full asks for an early round
)

type ctlTP struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset,omitempty"`
}

// ctlFile is one data or delete file in the manifest-entry Avro encoding of its spec.
type ctlFile struct {
	Spec  int    `json:"spec"`
	Entry []byte `json:"entry"`
}

type ctlTable struct {
	Name     string               `json:"name"`
	Base     int64                `json:"base"`
	SchemaID int                  `json:"schemaId"`
	Data     []ctlFile            `json:"data,omitempty"`
	Deletes  []ctlFile            `json:"deletes,omitempty"`
	Stats    icetable.CommitStats `json:"stats"`
	Tomb     *ctlTable            `json:"tombstones,omitempty"`
}

type ctlMsg struct {
	Type     string     `json:"type"`
	Group    string     `json:"group"`
	Round    string     `json:"round,omitempty"`
	From     string     `json:"from"`
	Assigned []ctlTP    `json:"assigned,omitempty"`
	Offsets  []ctlTP    `json:"offsets,omitempty"`
	Tables   []ctlTable `json:"tables,omitempty"`
	Error    string     `json:"error,omitempty"`
	OK       bool       `json:"ok,omitempty"`
	Included []string   `json:"included,omitempty"`
}

// encodePart turns a prepared part into its control-topic form.
func encodePart(name string, tbl *table.Table, p *icetable.Part) (ctlTable, error) {
	ct := ctlTable{Name: name, Base: p.Base, SchemaID: p.SchemaID, Stats: p.Stats}
	if !p.Files() {
		return ct, nil
	}
	md := tbl.Metadata()
	sc := schemaByID(md, p.SchemaID)
	if sc == nil {
		return ct, fmt.Errorf("table %s: schema %d not in metadata", name, p.SchemaID)
	}
	enc := func(files []ice.DataFile) ([]ctlFile, error) {
		out := make([]ctlFile, 0, len(files))
		for _, df := range files {
			spec := md.PartitionSpecByID(int(df.SpecID()))
			if spec == nil {
				return nil, fmt.Errorf("table %s: partition spec %d not in metadata", name, df.SpecID())
			}
			b, err := codec.EncodeDataFile(df, *spec, sc, md.Version())
			if err != nil {
				return nil, fmt.Errorf("table %s: encode %s: %w", name, df.FilePath(), err)
			}
			out = append(out, ctlFile{Spec: int(df.SpecID()), Entry: b})
		}
		return out, nil
	}
	var err error
	if ct.Data, err = enc(p.Data); err != nil {
		return ct, err
	}
	ct.Deletes, err = enc(p.Deletes)
	return ct, err
}

// decodePart is the inverse of encodePart against the committer's copy of the table metadata
// (schemas and specs are only ever added, so the ids the part names are there).
func decodePart(tbl *table.Table, ct ctlTable) (*icetable.Part, error) {
	p := &icetable.Part{Base: ct.Base, SchemaID: ct.SchemaID, Stats: ct.Stats}
	if len(ct.Data)+len(ct.Deletes) == 0 {
		return p, nil
	}
	md := tbl.Metadata()
	sc := schemaByID(md, ct.SchemaID)
	if sc == nil {
		return nil, fmt.Errorf("%w: schema %d not in the committer's metadata", icetable.ErrFenced, ct.SchemaID)
	}
	dec := func(fs []ctlFile) ([]ice.DataFile, error) {
		out := make([]ice.DataFile, 0, len(fs))
		for _, f := range fs {
			spec := md.PartitionSpecByID(f.Spec)
			if spec == nil {
				return nil, fmt.Errorf("%w: partition spec %d not in the committer's metadata", icetable.ErrFenced, f.Spec)
			}
			df, err := codec.DecodeDataFile(f.Entry, *spec, sc, md.Version())
			if err != nil {
				return nil, fmt.Errorf("decode data file: %w", err)
			}
			out = append(out, df)
		}
		return out, nil
	}
	var err error
	if p.Data, err = dec(ct.Data); err != nil {
		return nil, err
	}
	if p.Deletes, err = dec(ct.Deletes); err != nil {
		return nil, err
	}
	return p, nil
}

func schemaByID(md table.Metadata, id int) *ice.Schema {
	for _, s := range md.Schemas() {
		if s.ID == id {
			return s
		}
	}
	return nil
}
