package transforms

import (
	"github.com/connectd/connectd/connect"
)

// InsertHeader is org.apache.kafka.connect.transforms.InsertHeader.
type InsertHeader struct {
	header  string
	literal connect.SchemaAndValue
}

func (*InsertHeader) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "header", Type: connect.ConfigString, Default: connect.NoDefault, Validator: nonNull, Importance: connect.High, Doc: "The name of the header."}).
		Define(connect.ConfigKey{Name: "value.literal", Type: connect.ConfigString, Default: connect.NoDefault, Validator: nonNull, Importance: connect.High,
			Doc: "The literal value that is to be set as the header value on all records."})
}

var nonNull = connect.ValidatorFunc{Desc: "non-null string", Fn: func(name string, v any) error {
	if v == nil {
		return &connect.ConfigError{Name: name, Value: nil, Message: "entry must be non null"}
	}
	return nil
}}

func (*InsertHeader) Close() error { return nil }
func (t *InsertHeader) Configure(props map[string]string) (err error) {
	cfg, err := t.ConfigDef().Parse(props)
	if err != nil {
		return err
	}
	t.header = cfg.String("header")
	t.literal, err = parseValueString(cfg.String("value.literal"))
	return err
}

func (t *InsertHeader) Apply(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	out := r.NewRecord(r.Topic, r.Partition, r.KeySchema, r.Key, r.ValueSchema, r.Value, r.Timestamp, r.Headers.With(t.header, t.literal.Schema, t.literal.Value))
	return out, nil
}

// DropHeaders is org.apache.kafka.connect.transforms.DropHeaders.
type DropHeaders struct{ headers []string }

func (*DropHeaders) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{Name: "headers", Type: connect.ConfigList, Default: connect.NoDefault, Validator: nonNullNonEmptyList,
		Importance: connect.High, Doc: "The name of the headers to be removed."})
}
func (*DropHeaders) Close() error { return nil }
func (t *DropHeaders) Configure(props map[string]string) error {
	cfg, err := t.ConfigDef().Parse(props)
	if err != nil {
		return err
	}
	t.headers = cfg.List("headers")
	return nil
}

func (t *DropHeaders) Apply(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	hs := connect.Headers{}
	for _, h := range r.Headers {
		if !contains(t.headers, h.Key) {
			hs = append(hs, h)
		}
	}
	return r.NewRecord(r.Topic, r.Partition, r.KeySchema, r.Key, r.ValueSchema, r.Value, r.Timestamp, hs), nil
}
