package avro

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/avrotype"
)

// Names and properties, identical to Confluent's AvroData.
const (
	avroNamespace          = "io.confluent.connect.avro"
	defaultSchemaName      = "ConnectDefault"
	defaultSchemaFullName  = avroNamespace + "." + defaultSchemaName
	mapEntryTypeName       = "MapEntry"
	keyField               = "key"
	valueField             = "value"
	connectNameProp        = "connect.name"
	connectDocProp         = "connect.doc"
	connectVersionProp     = "connect.version"
	connectDefaultProp     = "connect.default"
	connectParametersProp  = "connect.parameters"
	connectInternalType    = "connect.internal.type"
	avroRecordDocProp      = avroNamespace + ".record.doc"
	avroEnumDocPrefix      = avroNamespace + ".enum.doc."
	avroFieldDocPrefix     = avroNamespace + ".field.doc."
	avroFieldDefaultFlag   = avroNamespace + ".field.default"
	avroEnumDefaultPrefix  = avroNamespace + ".enum.default."
	connectTypeProp        = "connect.type"
	avroTypeUnion          = avroNamespace + ".Union"
	avroTypeEnum           = avroNamespace + ".Enum"
	avroTypeAnything       = avroNamespace + ".Anything"
	avroPropPrefix         = "avro"
	logicalTypeProp        = "logicalType"
	logicalTimestampMillis = "timestamp-millis"
	logicalTimeMillis      = "time-millis"
	logicalDate            = "date"
	logicalDecimal         = "decimal"
	fixedSizeParam         = "connect.fixed.size"
	decimalPrecisionParam  = "connect.decimal.precision"
	defaultDecimalPrec     = 64
)

// compiled is the Connect view of one Avro schema: its Connect schema and a decoder producing Connect
// values straight from Avro binary.
type compiled struct {
	schema *connect.Schema
	dec    decodeFn
}

// toConnect converts an Avro schema as AvroData.toConnectSchema does (connect.meta.data=true,
// enhanced.avro.schema.support=false, generalized.sum.type.support=false, flatten.singleton.unions=true,
// discard.type.doc.default=false) and builds the matching decoder. version, when non-nil, is the
// registry version applied to the top-level schema when it carries no connect.version.
func toConnect(n *node, version *int) (*compiled, error) {
	c := &conv{inProgress: map[*node]bool{}}
	return c.convert(n, false, nil, false, version)
}

type conv struct {
	inProgress map[*node]bool
}

func (c *conv) convert(n *node, forceOptional bool, fieldDefault any, hasFieldDefault bool, version *int) (*compiled, error) {
	var b *connect.SchemaBuilder
	var mk func(s *connect.Schema) (decodeFn, error)
	logical := n.logical
	switch n.kind {
	case avrotype.Boolean:
		b = connect.BoolBuilder()
		mk = func(*connect.Schema) (decodeFn, error) { return decBool, nil }
	case avrotype.Bytes, avrotype.Fixed:
		if strings.EqualFold(logical, logicalDecimal) {
			scale := 0
			if v, ok := n.propInt("scale"); ok {
				scale = v
			}
			b = connect.DecimalBuilder(int32(scale))
			if _, present := n.props["precision"]; present {
				p, ok := n.props["precision"].(json.Number)
				if !ok {
					return nil, connect.DataErrorf("precision property must be a JSON Integer. https://avro.apache.org/docs/1.9.1/spec.html#Decimal")
				}
				pi, _ := n.propInt("precision")
				_ = p
				if pi != defaultDecimalPrec {
					b.Parameter(decimalPrecisionParam, strconv.Itoa(pi))
				}
			}
			mk = func(*connect.Schema) (decodeFn, error) { return decDecimal(n, int32(scale)), nil }
		} else {
			b = connect.BytesBuilder()
			mk = func(*connect.Schema) (decodeFn, error) {
				if n.kind == avrotype.Fixed {
					return decFixed(n.size), nil
				}
				return decBytes, nil
			}
		}
		if n.kind == avrotype.Fixed {
			b.Parameter(fixedSizeParam, strconv.Itoa(n.size))
		}
	case avrotype.Double:
		b = connect.Float64Builder()
		mk = func(*connect.Schema) (decodeFn, error) { return decDouble, nil }
	case avrotype.Float:
		b = connect.Float32Builder()
		mk = func(*connect.Schema) (decodeFn, error) { return decFloat, nil }
	case avrotype.Int:
		ct, hasCT := n.props[connectTypeProp].(string)
		_, hasCTAny := n.props[connectTypeProp]
		switch {
		case !hasCTAny && logical == "":
			b = connect.Int32Builder()
			mk = func(*connect.Schema) (decodeFn, error) { return decInt, nil }
		case logical != "":
			switch {
			case strings.EqualFold(logical, logicalDate):
				b = connect.DateBuilder()
				mk = func(*connect.Schema) (decodeFn, error) { return decDate, nil }
			case strings.EqualFold(logical, logicalTimeMillis):
				b = connect.TimeBuilder()
				mk = func(*connect.Schema) (decodeFn, error) { return decTime, nil }
			default:
				b = connect.Int32Builder()
				mk = func(*connect.Schema) (decodeFn, error) { return decInt, nil }
			}
		default:
			switch {
			case hasCT && ct == "int8":
				b = connect.Int8Builder()
				mk = func(*connect.Schema) (decodeFn, error) { return decInt8, nil }
			case hasCT && ct == "int16":
				b = connect.Int16Builder()
				mk = func(*connect.Schema) (decodeFn, error) { return decInt16, nil }
			default:
				return nil, connect.DataErrorf("Connect type annotation for Avro int field is null")
			}
		}
	case avrotype.Long:
		if strings.EqualFold(logical, logicalTimestampMillis) {
			b = connect.TimestampBuilder()
			mk = func(*connect.Schema) (decodeFn, error) { return decTimestamp, nil }
		} else {
			b = connect.Int64Builder()
			mk = func(*connect.Schema) (decodeFn, error) { return decLong, nil }
		}
	case avrotype.String:
		b = connect.StringBuilder()
		mk = func(*connect.Schema) (decodeFn, error) { return decString, nil }
	case avrotype.Array:
		el := n.items
		if isMapEntry(el) {
			if len(el.fields) != 2 || !hasField(el, keyField) || !hasField(el, valueField) {
				return nil, connect.DataErrorf("Found map encoded as array of key-value pairs, but array elements do not match the expected format.")
			}
			kc, err := (&conv{inProgress: c.inProgress}).convert(el.fields[el.fieldIdx[keyField]].typ, false, nil, false, nil)
			if err != nil {
				return nil, err
			}
			vc, err := (&conv{inProgress: c.inProgress}).convert(el.fields[el.fieldIdx[valueField]].typ, false, nil, false, nil)
			if err != nil {
				return nil, err
			}
			b = connect.MapBuilder(kc.schema, vc.schema)
			keyFirst := el.fieldIdx[keyField] == 0
			mk = func(*connect.Schema) (decodeFn, error) {
				return decMapEntries(kc.dec, vc.dec, keyFirst, minSize(el), kc.schema), nil
			}
		} else {
			ec, err := c.convert(el, false, nil, false, nil)
			if err != nil {
				return nil, err
			}
			b = connect.ArrayBuilder(ec.schema)
			mk = func(*connect.Schema) (decodeFn, error) { return decArray(ec.dec, minSize(el)), nil }
		}
	case avrotype.Map:
		vc, err := c.convert(n.values, false, nil, false, nil)
		if err != nil {
			return nil, err
		}
		b = connect.MapBuilder(connect.StringSchema, vc.schema)
		mk = func(*connect.Schema) (decodeFn, error) { return decMap(vc.dec, minSize(n.values)), nil }
	case avrotype.Record:
		if c.inProgress[n] {
			return nil, connect.DataErrorf("recursive Avro schema %s is not supported", n.fullName)
		}
		c.inProgress[n] = true
		defer delete(c.inProgress, n)
		b = connect.StructBuilder()
		if n.doc != "" {
			b.Parameter(avroRecordDocProp, n.doc)
		}
		decs := make([]decodeFn, len(n.fields))
		for i, f := range n.fields {
			if f.doc != "" {
				b.Parameter(avroFieldDocPrefix+f.name, f.doc)
			}
			var def any
			if f.hasDef {
				def = f.def
				if def == nil {
					def = jsonNull{}
				}
			}
			fc, err := c.convert(f.typ, false, def, f.hasDef, nil)
			if err != nil {
				return nil, err
			}
			fs := fc.schema
			if fp, ok := f.props[connectParametersProp].(map[string]any); ok {
				fs = applyFieldLevelParams(fs, fp)
			}
			b.Field(f.name, fs)
			decs[i] = fc.dec
		}
		mk = func(s *connect.Schema) (decodeFn, error) { return decRecord(s, decs), nil }
	case avrotype.Enum:
		b = connect.StringBuilder()
		if n.doc != "" {
			b.Parameter(avroEnumDocPrefix+n.name, n.doc)
		}
		if n.enumDef != nil {
			b.Parameter(avroEnumDefaultPrefix+n.name, *n.enumDef)
		}
		b.Parameter(avroTypeEnum, n.fullName)
		for _, s := range n.symbols {
			b.Parameter(avroTypeEnum+"."+s, s)
		}
		mk = func(*connect.Schema) (decodeFn, error) { return decEnum(n.symbols), nil }
	case avrotype.Union:
		if len(n.branches) == 1 {
			return c.convert(n.branches[0], false, nil, false, nil)
		}
		if len(n.branches) == 2 {
			for i, m := range n.branches {
				if m.kind == avrotype.Null {
					other := n.branches[1-i]
					oc, err := c.convert(other, true, nil, false, nil)
					if err != nil {
						return nil, err
					}
					return &compiled{schema: oc.schema, dec: decOptional(i, oc.dec)}, nil
				}
			}
		}
		b = connect.StructBuilder().Name(avroTypeUnion)
		seen := map[string]bool{}
		branchField := make([]int, len(n.branches))
		branchDec := make([]decodeFn, len(n.branches))
		fi := 0
		for i, m := range n.branches {
			if m.kind == avrotype.Null {
				b.Optional()
				branchField[i] = -1
				continue
			}
			name := unionMemberFieldName(m)
			if seen[name] {
				return nil, connect.DataErrorf("Multiple union schemas map to the Connect union field name")
			}
			seen[name] = true
			mc, err := c.convert(m, true, nil, false, nil)
			if err != nil {
				return nil, err
			}
			b.Field(name, mc.schema)
			branchField[i] = fi
			branchDec[i] = mc.dec
			fi++
		}
		mk = func(s *connect.Schema) (decodeFn, error) { return decUnion(s, branchField, branchDec), nil }
	case avrotype.Null:
		return nil, connect.DataErrorf("Standalone null schemas are not supported by this converter")
	default:
		return nil, connect.DataErrorf("Couldn't translate unsupported schema type %s.", n.kind)
	}

	if d, ok := n.props[connectDocProp].(string); ok {
		b.Doc(d)
	}
	versionInt := -1
	if vn, present := n.props[connectVersionProp]; present {
		num, ok := vn.(json.Number)
		if !ok {
			return nil, connect.DataErrorf("Invalid Connect version found: %v", vn)
		}
		v, _ := n.propInt(connectVersionProp)
		_ = num
		versionInt = v
	} else if version != nil {
		versionInt = *version
	}
	if versionInt >= 0 {
		cur, _ := b.Build()
		if cur != nil && cur.Version != nil {
			if int(*cur.Version) != versionInt {
				return nil, connect.DataErrorf("Mismatched versions: version already added to SchemaBuilder (%d) differs from version in source schema (%d)", *cur.Version, versionInt)
			}
		} else {
			b.Version(int32(versionInt))
		}
	}
	if ps, present := n.props[connectParametersProp]; present {
		pm, ok := ps.(map[string]any)
		if !ok {
			return nil, connect.DataErrorf("Expected JSON object for schema parameters but found: %v", ps)
		}
		for k, v := range pm {
			s, ok := v.(string)
			if !ok {
				return nil, connect.DataErrorf("Expected schema parameter values to be strings but found: %v", v)
			}
			b.Parameter(k, s)
		}
	}
	for k, v := range n.props {
		if strings.HasPrefix(k, avroPropPrefix) {
			b.Parameter(k, jsonToString(v))
		}
	}
	connectDefault, hasConnectDefault := n.props[connectDefaultProp]
	if !hasFieldDefault {
		if hasConnectDefault {
			fieldDefault, hasFieldDefault = connectDefault, true
		}
	} else if !hasConnectDefault {
		b.Parameter(avroFieldDefaultFlag, "true")
	}

	var name string
	if cn, present := n.props[connectNameProp]; present {
		s, ok := cn.(string)
		if !ok {
			return nil, connect.DataErrorf("Invalid schema name: %v", cn)
		}
		name = s
	} else if n.kind == avrotype.Record || n.kind == avrotype.Enum {
		name = n.fullName
	} else if n.kind == avrotype.Fixed && !strings.EqualFold(logical, logicalDecimal) {
		name = n.fullName
	}
	if name != "" && !strings.HasPrefix(name, defaultSchemaFullName) {
		cur, _ := b.Build()
		if cur != nil && cur.Name != "" {
			if cur.Name != name {
				return nil, connect.DataErrorf("Mismatched names: name already added to SchemaBuilder (%s) differs from name in source schema (%s)", cur.Name, name)
			}
		} else {
			b.Name(name)
		}
	}
	if forceOptional {
		b.Optional()
	}
	s, err := b.Build()
	if err != nil {
		return nil, connect.DataErrorf("%v", err)
	}
	if hasFieldDefault {
		if _, isNull := fieldDefault.(jsonNull); !isNull && fieldDefault != nil {
			// Invalid defaults are ignored, as AvroData does (it logs a warning).
			if dv, err := jsonToConnect(s, n, fieldDefault); err == nil && connect.ValidateValue(s, dv) == nil {
				s.Default = dv
			}
		}
	}
	dec, err := mk(s)
	if err != nil {
		return nil, err
	}
	return &compiled{schema: s, dec: dec}, nil
}

// jsonNull marks an explicit JSON null default (Avro's JsonProperties.NULL_VALUE).
type jsonNull struct{}

func hasField(n *node, name string) bool { _, ok := n.fieldIdx[name]; return ok }

func isMapEntry(n *node) bool {
	if n.kind != avrotype.Record {
		return false
	}
	if n.namespace == avroNamespace && n.name == mapEntryTypeName {
		return true
	}
	s, _ := n.props[connectInternalType].(string)
	return s == mapEntryTypeName
}

func unionMemberFieldName(n *node) string {
	switch n.kind {
	case avrotype.Record, avrotype.Enum, avrotype.Fixed:
		return n.name
	}
	return n.kind.String()
}

func jsonToString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case nil:
		return "null"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func applyFieldLevelParams(orig *connect.Schema, fp map[string]any) *connect.Schema {
	same := true
	for k, v := range fp {
		if o, ok := orig.Parameters[k]; !ok || o != jsonToString(v) {
			same = false
			break
		}
	}
	if same {
		return orig
	}
	b := connect.BuilderFrom(orig)
	for k, v := range fp {
		b.Parameter(k, jsonToString(v))
	}
	b.DefaultValue(nil)
	s, err := b.Build()
	if err != nil {
		return orig
	}
	s.Default = orig.Default
	return s
}
