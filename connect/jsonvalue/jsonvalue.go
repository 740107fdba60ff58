// Package jsonvalue is the JSON converter's scan result handed to sinks that read JSON bytes themselves: a
// record value left unconverted (Value) with where its object's members lie (Member), and the two opt-in
// interfaces, a converter's (Converter) and a sink task's (Sink). Without both the runtime converts as usual.
package jsonvalue

import (
	"math"

	"github.com/connectd/connectd/connect"
)

// Value is a record value the runtime left unconverted: a schemaless JSON object that the value
// converter checked would convert without error (Converter), handed to a sink task that takes
// such values (Sink) when no transformation runs. A sink that can read the object's members
// straight into its own format saves building the map; Value gives what the converter would have
// given. Like the records of a Put, the Value is the sink's only until Put returns (the runtime
// reuses it for a later record): a sink that keeps the value keeps a copy.
type Value struct {
	Bytes   []byte // the record's value as consumed: valid only until Put returns
	Topic   string
	Headers connect.Headers
	Conv    connect.Converter
	// Members lists the object's members in the order of Bytes, as the converter's check found them
	// (nil: not listed), so that a sink need not find them again; valid only until Put returns.
	Members []Member
}

// MaxListedBytes is the longest value whose members are listed: Member's offsets are int32s.
const MaxListedBytes = math.MaxInt32

// Member is where one member of a Value's object lies in its Bytes.
type Member struct {
	Name, NameEnd   int32 // the name's string token: its opening quote and the index after its closing one
	Value, ValueEnd int32 // the value: its first byte and the index after its last
	Flags           MemberFlags
}

// MemberFlags tell what a Member's bytes hold beyond what their first byte says.
type MemberFlags uint8

const (
	NameEscaped   MemberFlags = 1 << iota // the name's token has a backslash escape
	ValueEscaped                          // the value is a string token with a backslash escape
	ValueFraction                         // the value is a number with a fraction or an exponent
)

// Value converts the bytes as the converter would have. A sink may keep a copy of the bytes and call
// Value after Put returned, from another goroutine: a Converter's conversion must allow it.
func (v *Value) Value() (any, error) {
	sv, err := v.Conv.ToConnectData(v.Topic, v.Headers, v.Bytes)
	return sv.Value, err
}

// Converter is a connect.Converter that can tell, without converting, whether a value is a JSON object
// it converts to a schemaless map without error (JsonConverter with schemas.enable=false).
type Converter interface {
	// SchemalessJSONObject reports whether value is such an object, and appends its members to
	// members when it is (none for a value longer than MaxListedBytes).
	SchemalessJSONObject(value []byte, members []Member) ([]Member, bool)
}

// Sink is a connect.SinkTask that takes record values as *Value (and converts them with Value where
// it needs Connect data). AcceptsJSONValues is asked once, after Start.
type Sink interface {
	AcceptsJSONValues() bool
}
