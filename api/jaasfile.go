package api

import (
	"fmt"
	"os"
	"strings"
)

// jaasModule is one login module entry of a JAAS login configuration section.
type jaasModule struct {
	class   string
	flag    string
	options map[string]string
}

// readJAASSection reads a JAAS login configuration file (the format of java.security.auth.login.config, as
// sun.security.provider.ConfigFile reads it) and returns the entries of the named section:
//
//	Name { class flag [option=value ...]; ... };
//
// Words are letters, digits and . $ _ - *; values may be double- or single-quoted; // and /* */ are comments.
// ${property} expansion is not supported (the file is refused rather than read with an unexpanded value).
func readJAASSection(path, name string) ([]jaasModule, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading JAAS configuration: %w", err)
	}
	sections, err := parseJAASFile(string(data))
	if err != nil {
		return nil, fmt.Errorf("JAAS configuration %s: %w", path, err)
	}
	mods, ok := sections[name]
	if !ok {
		return nil, fmt.Errorf("JAAS configuration %s has no %s section", path, name)
	}
	return mods, nil
}

type jaasTok struct {
	kind byte // 'w' word, 'q' quoted string, or the punctuation character itself
	text string
	line int
}

func tokenizeJAASFile(s string) ([]jaasTok, error) {
	var toks []jaasTok
	line := 1
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\n':
			line++
			i++
		case c <= ' ':
			i++
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("line %d: unterminated comment", line)
			}
			line += strings.Count(s[i:i+2+end], "\n")
			i += end + 4
		case c == '/':
			// "//" comments, and a lone '/' as StreamTokenizer's comment character.
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'':
			var b strings.Builder
			j := i + 1
			for ; j < len(s) && s[j] != c && s[j] != '\n'; j++ {
				if s[j] == '\\' && j+1 < len(s) && s[j+1] != '\n' {
					j++
				}
				b.WriteByte(s[j])
			}
			if j >= len(s) || s[j] != c {
				return nil, fmt.Errorf("line %d: unterminated quoted string", line)
			}
			toks = append(toks, jaasTok{kind: 'q', text: b.String(), line: line})
			i = j + 1
		case c == '{' || c == '}' || c == ';' || c == '=':
			toks = append(toks, jaasTok{kind: c, text: string(c), line: line})
			i++
		case isJAASFileWordByte(c):
			j := i
			for j < len(s) && isJAASFileWordByte(s[j]) {
				j++
			}
			toks = append(toks, jaasTok{kind: 'w', text: s[i:j], line: line})
			i = j
		default:
			return nil, fmt.Errorf("line %d: unexpected character %q", line, c)
		}
	}
	return toks, nil
}

func isJAASFileWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80 ||
		c == '.' || c == '$' || c == '_' || c == '-' || c == '*'
}

func parseJAASFile(s string) (map[string][]jaasModule, error) {
	toks, err := tokenizeJAASFile(s)
	if err != nil {
		return nil, err
	}
	i := 0
	next := func(want byte, what string) (jaasTok, error) {
		if i >= len(toks) {
			return jaasTok{}, fmt.Errorf("expected %s, found end of file", what)
		}
		t := toks[i]
		i++
		if want != 0 && t.kind != want {
			return t, fmt.Errorf("line %d: expected %s, found %q", t.line, what, t.text)
		}
		return t, nil
	}
	out := map[string][]jaasModule{}
	for i < len(toks) {
		name, err := next('w', "a section name")
		if err != nil {
			return nil, err
		}
		if _, dup := out[name.text]; dup {
			return nil, fmt.Errorf("line %d: Can not specify multiple entries for %s", name.line, name.text)
		}
		if _, err := next('{', "'{'"); err != nil {
			return nil, err
		}
		var mods []jaasModule
		for i < len(toks) && toks[i].kind != '}' {
			class, err := next('w', "a login module class")
			if err != nil {
				return nil, err
			}
			flag, err := next('w', "a control flag")
			if err != nil {
				return nil, err
			}
			switch strings.ToLower(flag.text) {
			case "required", "requisite", "sufficient", "optional":
			default:
				return nil, fmt.Errorf("line %d: Invalid control flag, %s", flag.line, flag.text)
			}
			m := jaasModule{class: class.text, flag: strings.ToLower(flag.text), options: map[string]string{}}
			for {
				t, err := next(0, "an option or ';'")
				if err != nil {
					return nil, err
				}
				if t.kind == ';' {
					break
				}
				if t.kind != 'w' {
					return nil, fmt.Errorf("line %d: expected an option name, found %q", t.line, t.text)
				}
				if _, err := next('=', "'='"); err != nil {
					return nil, err
				}
				v, err := next(0, "an option value")
				if err != nil {
					return nil, err
				}
				if v.kind != 'w' && v.kind != 'q' {
					return nil, fmt.Errorf("line %d: expected a value for option %s", v.line, t.text)
				}
				if strings.Contains(v.text, "${") {
					return nil, fmt.Errorf("line %d: option %s: ${...} property expansion is not supported", v.line, t.text)
				}
				m.options[t.text] = v.text
			}
			mods = append(mods, m)
		}
		if _, err := next('}', "'}'"); err != nil {
			return nil, err
		}
		if _, err := next(';', "';' after '}'"); err != nil {
			return nil, err
		}
		out[name.text] = mods
	}
	return out, nil
}
