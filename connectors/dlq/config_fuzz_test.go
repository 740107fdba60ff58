package dlq

import (
	"maps"
	"slices"
	"testing"
)

// FuzzParseConfig: a REST body's connector config never panics parseConfig, whatever one key holds.
func FuzzParseConfig(f *testing.F) {
	base := map[string]string{ConfigTopic: "quarantine", ConfigBootstrap: "localhost:9092"}
	if _, err := parseConfig(base, nil); err != nil {
		f.Fatal(err)
	}
	var keys []string
	for _, k := range ConfigDef().Keys() {
		keys = append(keys, k.Name)
	}
	slices.Sort(keys)
	for i, v := range []string{"", " ", "true", "TRUE", "skip", "report", ",", "a:1,,b:2", "\xff", "-1"} {
		f.Add(uint(i), v, "", "")
	}
	f.Add(uint(0), "", ConfigReplay, "true")
	f.Fuzz(func(t *testing.T, i uint, v, extraKey, extraValue string) {
		p := maps.Clone(base)
		p[keys[i%uint(len(keys))]] = v
		if extraKey != "" {
			p[extraKey] = extraValue
		}
		_, _ = parseConfig(p, nil)
	})
}
