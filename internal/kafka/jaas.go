package kafka

import (
	"fmt"
	"strings"
)

// jaasEntry is one login module entry of a sasl.jaas.config value:
//
//	<loginModuleClass> <controlFlag> (<optionName>=<optionValue>)*;
type jaasEntry struct {
	Module  string
	Flag    string
	Options map[string]string
}

// parseJAAS parses a sasl.jaas.config value with the tokenizer rules of the JVM client
// (org.apache.kafka.common.security.JaasConfig, a java.io.StreamTokenizer):
//   - bytes 0..32 are white space; ';' and '=' are single-character tokens;
//   - '"' and '\” quote strings, which end at the matching quote or at the end of the line; inside,
//     '\' escapes: \a \b \f \n \r \t \v, octal \0..\377, and any other character stands for itself;
//   - '/' starts a comment to the end of the line, as do '//'; '/*' ... '*/' is a comment too;
//   - every other run of characters is a word (so unquoted values such as password=abc work).
//
// Exactly one entry, terminated by a semicolon, is required, as the JVM client's JaasContext does.
func parseJAAS(s string) (jaasEntry, error) {
	toks, err := tokenizeJAAS(s)
	if err != nil {
		return jaasEntry{}, err
	}
	var entries []jaasEntry
	i := 0
	next := func() (jaasToken, bool) {
		if i >= len(toks) {
			return jaasToken{}, false
		}
		t := toks[i]
		i++
		return t, true
	}
	for {
		mod, ok := next()
		if !ok {
			break
		}
		if !mod.isString() {
			return jaasEntry{}, fmt.Errorf("sasl.jaas.config: expected a login module class, got %q", mod.text)
		}
		flag, ok := next()
		if !ok {
			return jaasEntry{}, fmt.Errorf("sasl.jaas.config: login module control flag not specified")
		}
		if !flag.isString() {
			return jaasEntry{}, fmt.Errorf("sasl.jaas.config: login module control flag is not available")
		}
		switch strings.ToUpper(flag.text) {
		case "REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL":
		default:
			return jaasEntry{}, fmt.Errorf("sasl.jaas.config: invalid login module control flag '%s'", flag.text)
		}
		e := jaasEntry{Module: mod.text, Flag: flag.text, Options: map[string]string{}}
		terminated := false
		for {
			key, ok := next()
			if !ok {
				break
			}
			if key.kind == ';' {
				terminated = true
				break
			}
			eq, ok1 := next()
			val, ok2 := next()
			if !ok1 || eq.kind != '=' || !ok2 || !val.isString() {
				return jaasEntry{}, fmt.Errorf("sasl.jaas.config: value not specified for key '%s'", key.text)
			}
			e.Options[key.text] = val.text
		}
		if !terminated {
			return jaasEntry{}, fmt.Errorf("sasl.jaas.config: JAAS config entry not terminated by semi-colon")
		}
		entries = append(entries, e)
	}
	switch len(entries) {
	case 0:
		return jaasEntry{}, fmt.Errorf("sasl.jaas.config: login module not specified")
	case 1:
		return entries[0], nil
	default:
		return jaasEntry{}, fmt.Errorf("sasl.jaas.config: JAAS config property contains %d login modules, should be 1 module", len(entries))
	}
}

type jaasToken struct {
	kind rune // 'w' word, '"' or '\'' quoted string, or the ordinary character itself
	text string
}

func (t jaasToken) isString() bool { return t.kind == 'w' || t.kind == '"' || t.kind == '\'' }

func isJAASWordChar(r rune) bool {
	switch {
	case r == ';' || r == '=' || r == '/' || r == '"' || r == '\'':
		return false
	case r > ' ' && r <= 128, r >= 128+32: // StreamTokenizer: wordChars(32,128), (160,255); >255 alphabetic
		return true
	}
	return false
}

func tokenizeJAAS(s string) ([]jaasToken, error) {
	rs := []rune(s)
	var toks []jaasToken
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case r <= ' ':
			i++
		case r == '/':
			if i+1 < len(rs) && rs[i+1] == '*' {
				j := i + 2
				for j+1 < len(rs) && (rs[j] != '*' || rs[j+1] != '/') {
					j++
				}
				i = j + 2 // an unterminated comment swallows the rest, as StreamTokenizer
				continue
			}
			for i < len(rs) && rs[i] != '\n' && rs[i] != '\r' {
				i++
			}
		case r == '"' || r == '\'':
			q := r
			i++
			var b strings.Builder
			for i < len(rs) && rs[i] != q && rs[i] != '\n' && rs[i] != '\r' {
				c := rs[i]
				i++
				if c != '\\' || i >= len(rs) {
					b.WriteRune(c)
					continue
				}
				c = rs[i]
				i++
				switch {
				case c >= '0' && c <= '7':
					first, v := c, c-'0'
					if i < len(rs) && rs[i] >= '0' && rs[i] <= '7' {
						v = v<<3 + rs[i] - '0'
						i++
						if i < len(rs) && rs[i] >= '0' && rs[i] <= '7' && first <= '3' {
							v = v<<3 + rs[i] - '0'
							i++
						}
					}
					c = v
				case c == 'a':
					c = 0x7
				case c == 'b':
					c = '\b'
				case c == 'f':
					c = 0xC
				case c == 'n':
					c = '\n'
				case c == 'r':
					c = '\r'
				case c == 't':
					c = '\t'
				case c == 'v':
					c = 0xB
				}
				b.WriteRune(c)
			}
			if i < len(rs) && rs[i] == q {
				i++
			}
			toks = append(toks, jaasToken{kind: q, text: b.String()})
		case isJAASWordChar(r):
			j := i
			for j < len(rs) && isJAASWordChar(rs[j]) {
				j++
			}
			toks = append(toks, jaasToken{kind: 'w', text: string(rs[i:j])})
			i = j
		default:
			toks = append(toks, jaasToken{kind: r, text: string(r)})
			i++
		}
	}
	return toks, nil
}
