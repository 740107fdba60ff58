package transforms

import "github.com/connectd/connectd/connect"

// Plugins lists the SMTs and predicates under their JVM class names, for a runtime's registry.
func Plugins() []connect.Plugin {
	var out []connect.Plugin
	kv := func(simple string, mk func(side) connect.Transformation) {
		for _, sd := range []side{keySide, valueSide} {
			sd := sd
			out = append(out, connect.Plugin{Class: kt + simple + sd.suffix(), Type: connect.PluginTransformation,
				New: func() any { return mk(sd) }})
		}
	}
	smt := func(class string, mk func() connect.Transformation) {
		out = append(out, connect.Plugin{Class: class, Type: connect.PluginTransformation, New: func() any { return mk() }})
	}
	predicate := func(class string, mk func() connect.Predicate) {
		out = append(out, connect.Plugin{Class: class, Type: connect.PluginPredicate, New: func() any { return mk() }})
	}

	kv("Cast", func(s side) connect.Transformation { return &Cast{side: s} })
	kv("ExtractField", func(s side) connect.Transformation { return &ExtractField{side: s} })
	kv("Flatten", func(s side) connect.Transformation { return &Flatten{side: s} })
	kv("HeaderFrom", func(s side) connect.Transformation { return &HeaderFrom{side: s} })
	kv("HoistField", func(s side) connect.Transformation { return &HoistField{side: s} })
	kv("InsertField", func(s side) connect.Transformation { return &InsertField{side: s} })
	kv("MaskField", func(s side) connect.Transformation { return &MaskField{side: s} })
	kv("ReplaceField", func(s side) connect.Transformation { return &ReplaceField{side: s} })
	kv("SetSchemaMetadata", func(s side) connect.Transformation { return &SetSchemaMetadata{side: s} })
	kv("TimestampConverter", func(s side) connect.Transformation { return &TimestampConverter{side: s} })
	smt(kt+"DropHeaders", func() connect.Transformation { return &DropHeaders{} })
	smt(kt+"Filter", func() connect.Transformation { return &Filter{} })
	smt(kt+"InsertHeader", func() connect.Transformation { return &InsertHeader{} })
	smt(kt+"RegexRouter", func() connect.Transformation { return &RegexRouter{} })
	smt(kt+"TimestampRouter", func() connect.Transformation { return &TimestampRouter{} })
	smt(kt+"ValueToKey", func() connect.Transformation { return &ValueToKey{} })
	smt("io.debezium.transforms.ExtractNewRecordState", func() connect.Transformation { return &ExtractNewRecordState{} })
	const kp = kt + "predicates."
	predicate(kp+"HasHeaderKey", func() connect.Predicate { return &HasHeaderKey{} })
	predicate(kp+"RecordIsTombstone", func() connect.Predicate { return &RecordIsTombstone{} })
	predicate(kp+"TopicNameMatches", func() connect.Predicate { return &TopicNameMatches{} })
	return out
}
