package connect

import (
	"fmt"
	"strconv"
	"time"

	"github.com/connectd/connectd/connect/values"
)

// Logical type names, identical to the JVM's.
const (
	DecimalName      = "org.apache.kafka.connect.data.Decimal"
	DecimalScaleProp = "scale"
	DateName         = "org.apache.kafka.connect.data.Date"
	TimeName         = "org.apache.kafka.connect.data.Time"
	TimestampName    = "org.apache.kafka.connect.data.Timestamp"
)

// Decimal is an arbitrary-precision decimal: Unscaled × 10^-Scale, like java.math.BigDecimal.
type Decimal = values.Decimal

// NewDecimal builds a Decimal from an unscaled int64.
func NewDecimal(unscaled int64, scale int32) Decimal { return values.NewDecimal(unscaled, scale) }

// ParseDecimal parses a plain or exponent decimal string ("12.340", "-1E+3") keeping its scale.
func ParseDecimal(s string) (Decimal, error) { return values.ParseDecimal(s) }

// DecimalBuilder starts a BYTES schema of the Decimal logical type.
func DecimalBuilder(scale int32) *SchemaBuilder {
	return BytesBuilder().Name(DecimalName).Parameter(DecimalScaleProp, strconv.Itoa(int(scale))).Version(1)
}

// DecimalSchema is a required Decimal of the given scale.
func DecimalSchema(scale int32) *Schema { return DecimalBuilder(scale).MustBuild() }

// DecimalScale reads the scale parameter of a Decimal schema.
func DecimalScale(s *Schema) (int32, error) {
	v, ok := s.Parameters[DecimalScaleProp]
	if !ok {
		return 0, fmt.Errorf("invalid Decimal schema: scale parameter not found")
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("invalid Decimal scale %q: %w", v, err)
	}
	return int32(n), nil
}

// DecimalFromBytes decodes the big-endian two's-complement unscaled value, as the JVM's Decimal.toLogical.
func DecimalFromBytes(b []byte, scale int32) Decimal { return values.DecimalFromBytes(b, scale) }

// DecimalToBytes encodes the unscaled value as minimal big-endian two's complement (BigInteger.toByteArray).
func DecimalToBytes(d Decimal) []byte { return values.DecimalToBytes(d) }

// DateBuilder, TimeBuilder, TimestampBuilder start the JVM's logical date/time schemas.
func DateBuilder() *SchemaBuilder      { return Int32Builder().Name(DateName).Version(1) }
func TimeBuilder() *SchemaBuilder      { return Int32Builder().Name(TimeName).Version(1) }
func TimestampBuilder() *SchemaBuilder { return Int64Builder().Name(TimestampName).Version(1) }

var (
	DateSchema              = DateBuilder().MustBuild()
	TimeSchema              = TimeBuilder().MustBuild()
	TimestampSchema         = TimestampBuilder().MustBuild()
	OptionalDateSchema      = DateBuilder().Optional().MustBuild()
	OptionalTimeSchema      = TimeBuilder().Optional().MustBuild()
	OptionalTimestampSchema = TimestampBuilder().Optional().MustBuild()
)

// DateFromDays converts days since the epoch (the Date wire value) to time.Time.
func DateFromDays(days int32) time.Time { return values.DateFromDays(days) }

// DateToDays converts a time.Time that must be midnight UTC.
func DateToDays(t time.Time) (int32, error) { return values.DateToDays(t) }

// TimeFromMillis converts milliseconds since midnight (the Time wire value) to time.Time on 1970-01-01.
func TimeFromMillis(ms int32) time.Time { return values.TimeFromMillis(ms) }

// TimeToMillis converts a time.Time that must be on 1970-01-01 UTC.
func TimeToMillis(t time.Time) (int32, error) { return values.TimeToMillis(t) }

// LogicalName returns the schema's logical type name if it is one of the JVM's four, else "".
func LogicalName(s *Schema) string {
	if s == nil {
		return ""
	}
	switch s.Name {
	case DecimalName, DateName, TimeName, TimestampName:
		return s.Name
	}
	return ""
}
