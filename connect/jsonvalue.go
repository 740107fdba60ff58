package connect

import "math"

// JSONValue is a record value the runtime left unconverted: a schemaless JSON object that the value
// converter checked would convert without error (JSONValueConverter), handed to a sink task that takes
// such values (JSONValueSink) when no transformation runs. A sink that can read the object's members
// straight into its own format saves building the map; Value gives what the converter would have
// given. Like the records of a Put, the JSONValue is the sink's only until Put returns (the runtime
// reuses it for a later record): a sink that keeps the value keeps a copy.
type JSONValue struct {
	Bytes   []byte // the record's value as consumed: valid only until Put returns
	Topic   string
	Headers Headers
	Conv    Converter
	// Members lists the object's members in the order of Bytes, as the converter's check found them
	// (nil: not listed), so that a sink need not find them again; valid only until Put returns.
	Members []JSONMember
}

// MaxListedJSON is the longest value whose members are listed: JSONMember's offsets are int32s.
const MaxListedJSON = math.MaxInt32

// JSONMember is where one member of a JSONValue's object lies in its Bytes.
type JSONMember struct {
	Name, NameEnd   int32 // the name's string token: its opening quote and the index after its closing one
	Value, ValueEnd int32 // the value: its first byte and the index after its last
	Flags           JSONMemberFlags
}

// JSONMemberFlags tell what a JSONMember's bytes hold beyond what their first byte says.
type JSONMemberFlags uint8

const (
	JSONNameEscaped   JSONMemberFlags = 1 << iota // the name's token has a backslash escape
	JSONValueEscaped                              // the value is a string token with a backslash escape
	JSONValueFraction                             // the value is a number with a fraction or an exponent
)

// Value converts the bytes as the converter would have. A sink may keep a copy of the bytes and call
// Value after Put returned, from another goroutine: a JSONValueConverter's conversion must allow it.
func (v *JSONValue) Value() (any, error) {
	sv, err := v.Conv.ToConnectData(v.Topic, v.Headers, v.Bytes)
	return sv.Value, err
}

// JSONValueConverter is a Converter that can tell, without converting, whether a value is a JSON object
// it converts to a schemaless map without error (JsonConverter with schemas.enable=false).
type JSONValueConverter interface {
	// SchemalessJSONObject reports whether value is such an object, and appends its members to
	// members when it is (none for a value longer than MaxListedJSON).
	SchemalessJSONObject(value []byte, members []JSONMember) ([]JSONMember, bool)
}

// JSONValueSink is a SinkTask that takes record values as *JSONValue (and converts them with Value where
// it needs Connect data). AcceptsJSONValues is asked once, after Start.
type JSONValueSink interface {
	AcceptsJSONValues() bool
}
