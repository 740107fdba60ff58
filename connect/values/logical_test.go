package values

import (
	"bytes"
	"math"
	"math/big"
	"testing"
	"time"
)

func TestDecimalBytes(t *testing.T) {
	for _, c := range []struct {
		unscaled int64
		wire     []byte
	}{
		{0, []byte{0}}, {1, []byte{1}}, {127, []byte{0x7f}}, {128, []byte{0, 0x80}}, {-1, []byte{0xff}},
		{-128, []byte{0x80}}, {-129, []byte{0xff, 0x7f}}, {256, []byte{1, 0}},
	} {
		d := NewDecimal(c.unscaled, 2)
		if got := DecimalToBytes(d); !bytes.Equal(got, c.wire) {
			t.Errorf("DecimalToBytes(%d) = %x, want %x", c.unscaled, got, c.wire)
		}
		if back := DecimalFromBytes(c.wire, 2); back.Unscaled.Int64() != c.unscaled || back.Scale != 2 {
			t.Errorf("DecimalFromBytes(%x) = %v", c.wire, back)
		}
	}
	if got := DecimalToBytes(Decimal{}); !bytes.Equal(got, []byte{0}) {
		t.Errorf("DecimalToBytes(zero value) = %x", got)
	}
}

func TestDecimalToFixed(t *testing.T) {
	for _, c := range []struct {
		v    int64
		size int
		want []byte
		err  string
	}{
		{1, 2, []byte{0, 1}, ""},
		{-1, 3, []byte{0xff, 0xff, 0xff}, ""},
		{32767, 2, []byte{0x7f, 0xff}, ""},
		{-32768, 2, []byte{0x80, 0}, ""},
		{32768, 2, nil, "decimal 32768 does not fit 2 bytes"},
		{-32769, 2, nil, "decimal -32769 does not fit 2 bytes"},
	} {
		got, err := DecimalToFixed(Decimal{Unscaled: big.NewInt(c.v)}, c.size)
		if errText(err) != c.err || !bytes.Equal(got, c.want) {
			t.Errorf("DecimalToFixed(%d, %d) = %x, %q; want %x, %q", c.v, c.size, got, errText(err), c.want, c.err)
		}
		if err == nil {
			if back := DecimalFromBytes(got, 0); back.Unscaled.Int64() != c.v {
				t.Errorf("DecimalFromBytes(DecimalToFixed(%d)) = %v", c.v, back)
			}
		}
	}
}

func TestParseDecimalAndString(t *testing.T) {
	for _, c := range []struct {
		in, plain string
		scale     int32
		err       string
	}{
		{"12.340", "12.340", 3, ""},
		{"-1E+3", "-1000", -3, ""},
		{"1.5e-2", "0.015", 3, ""},
		{"-0.05", "-0.05", 2, ""},
		{"7", "7", 0, ""},
		{"1.2.3", "", 0, `invalid decimal "12.3"`},
		{"1e", "", 0, `invalid decimal "1e"`},
	} {
		d, err := ParseDecimal(c.in)
		if errText(err) != c.err || (err == nil && (d.String() != c.plain || d.Scale != c.scale)) {
			t.Errorf("ParseDecimal(%q) = %v (scale %d), %q; want %s (scale %d), %q", c.in, d, d.Scale, errText(err), c.plain, c.scale, c.err)
		}
	}
	if _, err := NewDecimal(1234, 2).Rescale(1); errText(err) != "decimal 12.34 cannot be rescaled to scale 1 without rounding" {
		t.Errorf("Rescale: %v", err)
	}
	if f := NewDecimal(-25, 1).Float64(); f != -2.5 {
		t.Errorf("Float64 = %v", f)
	}
	if f := NewDecimal(3, -2).Float64(); f != 300 {
		t.Errorf("Float64 of a negative scale = %v", f)
	}
}

func TestDateTimeWire(t *testing.T) {
	if got := DateFromDays(19724); !got.Equal(time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("DateFromDays = %v", got)
	}
	if d, err := DateToDays(time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)); d != 19724 || err != nil {
		t.Errorf("DateToDays = %d, %v", d, err)
	}
	if _, err := DateToDays(time.Date(2024, 1, 2, 0, 0, 1, 0, time.UTC)); errText(err) != "kafka connect Date type should not have any time fields set to non-zero values" {
		t.Errorf("DateToDays of a time: %v", err)
	}
	if got := TimeFromMillis(1500); !got.Equal(time.UnixMilli(1500)) {
		t.Errorf("TimeFromMillis = %v", got)
	}
	if ms, err := TimeToMillis(time.UnixMilli(MillisPerDay - 1)); ms != MillisPerDay-1 || err != nil {
		t.Errorf("TimeToMillis = %d, %v", ms, err)
	}
	if _, err := TimeToMillis(time.UnixMilli(MillisPerDay)); errText(err) != "kafka connect Time type should not have any date fields set to non-zero values" {
		t.Errorf("TimeToMillis of a date: %v", err)
	}
	if got := TimestampFromMillis(-1); got.Location() != time.UTC || got.UnixMilli() != -1 {
		t.Errorf("TimestampFromMillis = %v", got)
	}
}

func TestSignExtend(t *testing.T) {
	for _, c := range []struct {
		in   []byte
		size int
		want []byte
		err  string
	}{
		{[]byte{0x01}, 3, []byte{0, 0, 1}, ""},
		{[]byte{0x80}, 3, []byte{0xff, 0xff, 0x80}, ""},
		{[]byte{}, 2, []byte{0, 0}, ""},
		{[]byte{1, 2}, 2, []byte{1, 2}, ""},
		{[]byte{1, 2, 3}, 2, nil, "3 bytes do not fit 2"},
	} {
		got, err := SignExtend(c.in, c.size)
		if errText(err) != c.err || !bytes.Equal(got, c.want) {
			t.Errorf("SignExtend(%x, %d) = %x, %q; want %x, %q", c.in, c.size, got, errText(err), c.want, c.err)
		}
	}
}

// A scale beyond int32 is refused as BigDecimal refuses it, and a decimal far outside float64's range
// converts without computing its power of ten.
func TestDecimalExtremeScales(t *testing.T) {
	for _, s := range []string{"1e-2147483648", "0.1e-2147483647", "1e2147483648", "10e-2147483649"} {
		if d, err := ParseDecimal(s); err == nil {
			t.Errorf("ParseDecimal(%q) = %v, want an error", s, d)
		}
	}
	if d, err := ParseDecimal("1e-2147483647"); err != nil || d.Scale != math.MaxInt32 {
		t.Errorf("ParseDecimal(1e-2147483647) = %v, %v", d, err)
	}
	done := make(chan []float64, 1)
	go func() {
		done <- []float64{NewDecimal(1, math.MaxInt32).Float64(), NewDecimal(-1, math.MaxInt32).Float64(),
			NewDecimal(7, math.MinInt32).Float64(), NewDecimal(-7, math.MinInt32).Float64(),
			NewDecimal(15, 1).Float64(), Decimal{}.Float64()}
	}()
	select {
	case got := <-done:
		want := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), 1.5, 0}
		for i := range want {
			if got[i] != want[i] || math.Signbit(got[i]) != math.Signbit(want[i]) {
				t.Errorf("Float64 #%d = %v, want %v", i, got[i], want[i])
			}
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Float64 of an extreme scale did not return")
	}
}
