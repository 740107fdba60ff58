package clickhouse

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"net/netip"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/values"
)

// Value coercions from Connect values (see connect/doc.go) and schemaless JSON values to ClickHouse
// column values. Every function returns an error instead of truncating or wrapping silently, so an
// unmappable record goes to the error handler rather than corrupting a row.

// toInt64 is values.ToLong, with a boolean as 0 or 1 (the official sink writes booleans to integer
// columns).
func toInt64(v any) (int64, error) {
	if b, ok := v.(bool); ok {
		if b {
			return 1, nil
		}
		return 0, nil
	}
	return values.ToLong(v)
}

func toUint64(v any) (uint64, error) {
	switch x := v.(type) {
	case uint64:
		return x, nil
	case uint:
		return uint64(x), nil
	case json.Number:
		return strconv.ParseUint(string(x), 10, 64)
	case string:
		n, err := strconv.ParseUint(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("cannot parse %q as an unsigned integer", x)
		}
		return n, nil
	case float64:
		if x != math.Trunc(x) || x < 0 || x >= 1.8446744073709552e19 {
			return 0, fmt.Errorf("%v is not an unsigned integer", x)
		}
		return uint64(x), nil
	}
	n, err := toInt64(v)
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, fmt.Errorf("%d is negative", n)
	}
	return uint64(n), nil
}

func intIn(v any, min, max int64, typ string) (int64, error) {
	n, err := toInt64(v)
	if err != nil {
		return 0, err
	}
	if n < min || n > max {
		return 0, fmt.Errorf("%d out of range for %s", n, typ)
	}
	return n, nil
}

func uintIn(v any, max uint64, typ string) (uint64, error) {
	n, err := toUint64(v)
	if err != nil {
		return 0, err
	}
	if n > max {
		return 0, fmt.Errorf("%d out of range for %s", n, typ)
	}
	return n, nil
}

// toStringBytes renders a value for a String column: strings and bytes as is, scalars in their plain
// text form, and structured values (maps, arrays, structs) as JSON, as the official sink does for JSON
// strings.
func toStringBytes(v any) ([]byte, error) {
	if b, ok := v.([]byte); ok {
		return b, nil
	}
	if b, ok := values.AppendString(nil, v); ok {
		return b, nil
	}
	switch x := v.(type) {
	case *connect.Struct, map[string]any, map[any]any, []any:
		return json.Marshal(jsonable(x))
	}
	return nil, fmt.Errorf("cannot convert %T to a string", v)
}

func jsonable(v any) any {
	switch x := v.(type) {
	case *connect.Struct:
		m := map[string]any{}
		for _, f := range x.Schema().Fields() {
			m[f.Name] = jsonable(x.GetIndex(f.Index))
		}
		return m
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = jsonable(e)
		}
		return m
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = jsonable(e)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonable(e)
		}
		return out
	case []byte:
		return x
	case connect.Decimal:
		return json.Number(x.String())
	}
	return v
}

// toDecimal converts to an unscaled integer at the given scale; fractional digits beyond the scale are
// an error (ClickHouse would truncate them).
func toDecimal(v any, scale int) (*big.Int, error) {
	d, err := values.ToDecimal(v, int32(scale))
	if err != nil {
		return nil, err
	}
	return d.Unscaled, nil
}

func toIP(v any) (netip.Addr, error) {
	switch x := v.(type) {
	case string:
		return netip.ParseAddr(strings.TrimSpace(x))
	case []byte:
		if a, ok := netip.AddrFromSlice(x); ok {
			return a, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("cannot convert %T to an IP address", v)
}

// asSlice returns the elements of any slice value (Connect arrays are []any, schemaless ones too; typed
// slices are accepted through reflection).
func asSlice(v any) ([]any, bool) {
	switch x := v.(type) {
	case []any:
		return x, true
	case []string:
		out := make([]any, len(x))
		for i := range x {
			out[i] = x[i]
		}
		return out, true
	case []byte, string:
		return nil, false
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return nil, false
	}
	out := make([]any, rv.Len())
	for i := range out {
		out[i] = rv.Index(i).Interface()
	}
	return out, true
}

type kv struct{ k, v any }

// asMap returns map entries in a deterministic order (sorted by the key's text form) so that a retried
// batch encodes to identical bytes.
func asMap(v any) ([]kv, bool) {
	var out []kv
	switch x := v.(type) {
	case map[any]any:
		for k, e := range x {
			out = append(out, kv{k, e})
		}
	case map[string]any:
		for k, e := range x {
			out = append(out, kv{k, e})
		}
	case map[string]string:
		for k, e := range x {
			out = append(out, kv{k, e})
		}
	case *connect.Struct:
		for _, f := range x.Schema().Fields() {
			out = append(out, kv{f.Name, x.GetIndex(f.Index)})
		}
		return out, true
	default:
		rv := reflect.ValueOf(v)
		if rv.Kind() != reflect.Map {
			return nil, false
		}
		it := rv.MapRange()
		for it.Next() {
			out = append(out, kv{it.Key().Interface(), it.Value().Interface()})
		}
	}
	sortKV(out)
	return out, true
}

func sortKV(s []kv) {
	if len(s) < 2 {
		return
	}
	keys := make([]string, len(s))
	for i := range s {
		keys[i] = fmt.Sprint(s[i].k)
	}
	// insertion sort keeps it allocation-free for the small maps typical of records
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func toUUID(v any) (uuid.UUID, error) {
	switch x := v.(type) {
	case string:
		return uuid.Parse(strings.TrimSpace(x))
	case []byte:
		if len(x) == 16 {
			return uuid.FromBytes(x)
		}
		return uuid.ParseBytes(x)
	case uuid.UUID:
		return x, nil
	case [16]byte:
		return uuid.UUID(x), nil
	}
	return uuid.UUID{}, fmt.Errorf("cannot convert %T to a UUID", v)
}

// bigWords converts an integer value to n little-endian 64-bit two's-complement words.
func bigWords(v any, n int, signed bool, typ string) ([]uint64, error) {
	var b *big.Int
	switch x := v.(type) {
	case *big.Int:
		b = x
	case string:
		var ok bool
		if b, ok = new(big.Int).SetString(strings.TrimSpace(x), 10); !ok {
			return make([]uint64, n), fmt.Errorf("cannot parse %q as an integer", x)
		}
	case uint64:
		b = new(big.Int).SetUint64(x)
	default:
		i, err := toInt64(v)
		if err != nil {
			return make([]uint64, n), err
		}
		b = big.NewInt(i)
	}
	bits := uint(64 * n)
	lim := new(big.Int).Lsh(big.NewInt(1), bits)
	if signed {
		half := new(big.Int).Rsh(lim, 1)
		if b.Cmp(half) >= 0 || b.Cmp(new(big.Int).Neg(half)) < 0 {
			return make([]uint64, n), fmt.Errorf("%s out of range for %s", b, typ)
		}
	} else if b.Sign() < 0 || b.Cmp(lim) >= 0 {
		return make([]uint64, n), fmt.Errorf("%s out of range for %s", b, typ)
	}
	u := new(big.Int).Set(b)
	if u.Sign() < 0 {
		u.Add(u, lim)
	}
	words := make([]uint64, n)
	mask := new(big.Int).SetUint64(math.MaxUint64)
	for i := 0; i < n; i++ {
		words[i] = new(big.Int).And(u, mask).Uint64()
		u.Rsh(u, 64)
	}
	return words, nil
}
