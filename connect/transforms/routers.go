package transforms

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

// javaRegexValidator is the JVM's RegexValidator (patterns are compiled as RE2 here).
var javaRegexValidator = connect.ValidatorFunc{Desc: "valid regex", Fn: func(name string, v any) error {
	s, _ := v.(string)
	if _, err := compileJavaRegex(s); err != nil {
		return &connect.ConfigError{Name: name, Value: s, Message: "Invalid regex: " + err.Error()}
	}
	return nil
}}

// compileJavaRegex compiles a java.util.regex pattern for full matching (Matcher.matches).
func compileJavaRegex(p string) (*regexp.Regexp, error) {
	if _, err := regexp.Compile(p); err != nil {
		return nil, err
	}
	return regexp.Compile(`^(?:` + p + `)$`)
}

// javaReplacement turns a Matcher.replaceFirst replacement ($1, ${name}, \$) into a regexp.Expand template.
func javaReplacement(rep string, re *regexp.Regexp) string {
	var b strings.Builder
	for i := 0; i < len(rep); i++ {
		c := rep[i]
		switch {
		case c == '\\' && i+1 < len(rep):
			i++
			if rep[i] == '$' {
				b.WriteString("$$")
			} else {
				b.WriteByte(rep[i])
			}
		case c == '$' && i+1 < len(rep) && rep[i+1] == '{':
			j := strings.IndexByte(rep[i:], '}')
			if j < 0 {
				b.WriteString("$$")
				continue
			}
			b.WriteString(rep[i : i+j+1])
			i += j
		case c == '$':
			if i+1 >= len(rep) || rep[i+1] < '0' || rep[i+1] > '9' {
				b.WriteString("$$")
				continue
			}
			n := int(rep[i+1] - '0')
			j := i + 2
			for j < len(rep) && rep[j] >= '0' && rep[j] <= '9' {
				m := n*10 + int(rep[j]-'0')
				if m > re.NumSubexp() {
					break
				}
				n = m
				j++
			}
			b.WriteString("${" + strconv.Itoa(n) + "}")
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// RegexRouter is org.apache.kafka.connect.transforms.RegexRouter.
type RegexRouter struct {
	re          *regexp.Regexp
	replacement string
}

func (*RegexRouter) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "regex", Type: connect.ConfigString, Default: connect.NoDefault, Validator: javaRegexValidator, Importance: connect.High, Doc: "Regular expression to use for matching."}).
		Define(connect.ConfigKey{Name: "replacement", Type: connect.ConfigString, Default: connect.NoDefault, Importance: connect.High, Doc: "Replacement string."})
}
func (*RegexRouter) Close() error { return nil }
func (t *RegexRouter) Configure(props map[string]string) (err error) {
	cfg, err := t.ConfigDef().Parse(props)
	if err != nil {
		return err
	}
	if t.re, err = compileJavaRegex(cfg.String("regex")); err != nil {
		return err
	}
	t.replacement = javaReplacement(cfg.String("replacement"), t.re)
	return nil
}

func (t *RegexRouter) Apply(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	m := t.re.FindStringSubmatchIndex(r.Topic)
	if m == nil {
		return r, nil
	}
	topic := string(t.re.ExpandString(nil, t.replacement, r.Topic, m))
	return r.NewRecord(topic, r.Partition, r.KeySchema, r.Key, r.ValueSchema, r.Value, r.Timestamp, r.Headers), nil
}

// TimestampRouter is org.apache.kafka.connect.transforms.TimestampRouter.
type TimestampRouter struct {
	topicFormat string
	tsFormat    *javaDateFormat
}

func (*TimestampRouter) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "topic.format", Type: connect.ConfigString, Default: "${topic}-${timestamp}", Importance: connect.High,
			Doc: "Format string which can contain <code>${topic}</code> and <code>${timestamp}</code> as placeholders for the topic and timestamp, respectively."}).
		Define(connect.ConfigKey{Name: "timestamp.format", Type: connect.ConfigString, Default: "yyyyMMdd", Importance: connect.High,
			Doc: "Format string for the timestamp that is compatible with <code>java.text.SimpleDateFormat</code>."})
}
func (*TimestampRouter) Close() error { return nil }
func (t *TimestampRouter) Configure(props map[string]string) (err error) {
	cfg, err := t.ConfigDef().Parse(props)
	if err != nil {
		return err
	}
	t.topicFormat = cfg.String("topic.format")
	t.tsFormat, err = newJavaDateFormat(cfg.String("timestamp.format"))
	if err != nil {
		return &connect.ConfigError{Message: err.Error()}
	}
	return nil
}

func (t *TimestampRouter) Apply(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	if r.Timestamp == connect.NoTimestamp {
		return nil, connect.DataErrorf("Timestamp missing on record: %s", r)
	}
	ts := t.tsFormat.format(time.UnixMilli(r.Timestamp).UTC())
	topic := strings.ReplaceAll(strings.ReplaceAll(t.topicFormat, "${topic}", r.Topic), "${timestamp}", ts)
	return r.NewRecord(topic, r.Partition, r.KeySchema, r.Key, r.ValueSchema, r.Value, r.Timestamp, r.Headers), nil
}

// Filter is org.apache.kafka.connect.transforms.Filter: it drops every record (use it with a predicate).
type Filter struct{}

func (*Filter) ConfigDef() *connect.ConfigDef                          { return connect.NewConfigDef() }
func (*Filter) Configure(map[string]string) error                      { return nil }
func (*Filter) Apply(*connect.SinkRecord) (*connect.SinkRecord, error) { return nil, nil }
func (*Filter) Close() error                                           { return nil }

// HasHeaderKey is org.apache.kafka.connect.transforms.predicates.HasHeaderKey.
type HasHeaderKey struct{ name string }

func (*HasHeaderKey) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{Name: "name", Type: connect.ConfigString, Default: connect.NoDefault, Validator: connect.NonEmptyString(),
		Importance: connect.Medium, Doc: "The header name."})
}
func (p *HasHeaderKey) Configure(props map[string]string) error {
	cfg, err := p.ConfigDef().Parse(props)
	if err != nil {
		return err
	}
	p.name = cfg.String("name")
	return nil
}
func (p *HasHeaderKey) Test(r *connect.SinkRecord) (bool, error) {
	_, ok := r.Headers.Last(p.name)
	return ok, nil
}
func (*HasHeaderKey) Close() error { return nil }

// RecordIsTombstone is org.apache.kafka.connect.transforms.predicates.RecordIsTombstone.
type RecordIsTombstone struct{}

func (*RecordIsTombstone) ConfigDef() *connect.ConfigDef            { return connect.NewConfigDef() }
func (*RecordIsTombstone) Configure(map[string]string) error        { return nil }
func (*RecordIsTombstone) Test(r *connect.SinkRecord) (bool, error) { return r.Value == nil, nil }
func (*RecordIsTombstone) Close() error                             { return nil }

// TopicNameMatches is org.apache.kafka.connect.transforms.predicates.TopicNameMatches.
type TopicNameMatches struct{ re *regexp.Regexp }

func (*TopicNameMatches) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{Name: "pattern", Type: connect.ConfigString, Default: connect.NoDefault,
		Validator: connect.ValidatorFunc{Desc: "non-empty string, valid regex", Fn: func(name string, v any) error {
			if err := connect.NonEmptyString().Validate(name, v); err != nil {
				return err
			}
			return javaRegexValidator.Validate(name, v)
		}},
		Importance: connect.Medium, Doc: "A Java regular expression for matching against the name of a record's topic."})
}
func (p *TopicNameMatches) Configure(props map[string]string) (err error) {
	cfg, err := p.ConfigDef().Parse(props)
	if err != nil {
		return err
	}
	p.re, err = compileJavaRegex(cfg.String("pattern"))
	if err != nil {
		return &connect.ConfigError{Name: "pattern", Value: cfg.String("pattern"), Message: "entry must be a Java-compatible regular expression: " + err.Error()}
	}
	return nil
}
func (p *TopicNameMatches) Test(r *connect.SinkRecord) (bool, error) {
	return p.re.MatchString(r.Topic), nil
}
func (*TopicNameMatches) Close() error { return nil }
