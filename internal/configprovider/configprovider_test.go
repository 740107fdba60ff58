package configprovider

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
}

// The JVM's pattern groups, including colons in paths and keys and several references in one value.
func TestReferences(t *testing.T) {
	cases := []struct {
		in   string
		want []Reference
	}{
		{"${file:/etc/a.properties:pw}", []Reference{{"file", "/etc/a.properties", "pw"}}},
		{"${env:HOME}", []Reference{{"env", "", "HOME"}}},
		{"${file:/a/b:c:d}", []Reference{{"file", "/a/b", "c:d"}}},
		{"x${env:A}y${dir:/run/s:k}z", []Reference{{"env", "", "A"}, {"dir", "/run/s", "k"}}},
		{"${notareference}", nil},
		{"${a:}", []Reference{{"a", "", ""}}},
		{"$${env:A}}", []Reference{{"env", "", "A"}}},
		{"${env:A", nil},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, References(c.in), c.in)
		assert.Equal(t, c.want != nil, HasReference(c.in), c.in)
	}
}

func TestTransformFileDirectoryEnv(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "secrets.properties"), "db.password=s3cr3t\npath : /tmp/out\\\n.txt\n")
	writeFile(t, filepath.Join(dir, "secrets", "token"), "tok\n")
	require.NoError(t, os.Mkdir(filepath.Join(dir, "secrets", "sub"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(dir, "secrets", "token"), filepath.Join(dir, "secrets", "link")))

	tr, err := FromWorkerConfig(map[string]string{
		"config.providers":                "file,dir,env",
		"config.providers.file.class":     FileClass,
		"config.providers.dir.class":      "DirectoryConfigProvider",
		"config.providers.env.class":      EnvVarClass,
		"config.providers.env.param.x":    "unused",
		"config.providers.file.param.foo": "bar",
	})
	require.NoError(t, err)
	tr.providers["env"] = NewEnvVarProvider(map[string]string{"CONNECT_PW": "envpw"})
	require.NoError(t, tr.providers["env"].Configure(nil))
	assert.Equal(t, []string{"dir", "env", "file"}, tr.Providers())

	props := filepath.Join(dir, "secrets.properties")
	in := map[string]string{
		"password":  "${file:" + props + ":db.password}",
		"file":      "${file:" + props + ":path}",
		"mixed":     "a-${env:CONNECT_PW}-${dir:" + dir + "/secrets:token}-b",
		"link":      "${dir:" + dir + "/secrets:link}",
		"missing":   "${file:" + props + ":nope}",
		"subdir":    "${dir:" + dir + "/secrets:sub}",
		"nested":    "${dir:" + dir + ":secrets/token}",
		"unknown":   "${vault:secret/data:pw}",
		"plain":     "no reference",
		"emptypath": "${file::x}",
	}
	out, err := tr.Transform(in)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"password":  "s3cr3t",
		"file":      "/tmp/out.txt",
		"mixed":     "a-envpw-tok\n-b",
		"link":      "tok\n",
		"missing":   in["missing"],
		"subdir":    in["subdir"],
		"nested":    in["nested"],
		"unknown":   in["unknown"],
		"plain":     "no reference",
		"emptypath": "${file::x}",
	}, out)
	assert.Equal(t, "${file:"+props+":db.password}", in["password"], "the input is not modified")

	_, err = tr.Transform(map[string]string{"a": "${file:" + dir + "/none.properties:k}"})
	assert.EqualError(t, err, "Could not read properties from file "+dir+"/none.properties")
	_, err = tr.Transform(map[string]string{"a": "${env:/x:k}"})
	assert.EqualError(t, err, "Path is not supported for EnvVarConfigProvider, invalid value '/x'")

	var none *Transformer
	out, err = none.Transform(in)
	require.NoError(t, err)
	assert.Equal(t, in, out)
}

func TestAllowedPaths(t *testing.T) {
	dir := t.TempDir()
	allowed := filepath.Join(dir, "allowed")
	writeFile(t, filepath.Join(allowed, "a.properties"), "k=inside\n")
	writeFile(t, filepath.Join(dir, "outside.properties"), "k=outside\n")
	writeFile(t, filepath.Join(allowed, "d", "k"), "dir-inside")
	writeFile(t, filepath.Join(dir, "allowedx", "b.properties"), "k=sibling\n")

	tr, err := FromWorkerConfig(map[string]string{
		"config.providers":                          "file,dir",
		"config.providers.file.class":               FileClass,
		"config.providers.file.param.allowed.paths": allowed,
		"config.providers.dir.class":                DirectoryClass,
		"config.providers.dir.param.allowed.paths":  allowed + "/d",
	})
	require.NoError(t, err)
	in := map[string]string{
		"in":       "${file:" + allowed + "/a.properties:k}",
		"out":      "${file:" + dir + "/outside.properties:k}",
		"dotdot":   "${file:" + allowed + "/../outside.properties:k}",
		"sibling":  "${file:" + dir + "/allowedx/b.properties:k}",
		"relative": "${file:outside.properties:k}",
		"dirIn":    "${dir:" + allowed + "/d:k}",
		"dirOut":   "${dir:" + allowed + ":a.properties}",
	}
	out, err := tr.Transform(in)
	require.NoError(t, err)
	assert.Equal(t, "inside", out["in"])
	assert.Equal(t, "dir-inside", out["dirIn"])
	for _, k := range []string{"out", "dotdot", "sibling", "relative", "dirOut"} {
		assert.Equal(t, in[k], out[k], "%s must stay unresolved", k)
	}

	_, err = FromWorkerConfig(map[string]string{"config.providers": "f", "config.providers.f.class": FileClass,
		"config.providers.f.param.allowed.paths": "relative/dir"})
	assert.ErrorContains(t, err, "Path relative/dir is not absolute")
	_, err = FromWorkerConfig(map[string]string{"config.providers": "f", "config.providers.f.class": FileClass,
		"config.providers.f.param.allowed.paths": dir + "/does-not-exist"})
	assert.ErrorContains(t, err, "Path "+dir+"/does-not-exist does not exist")
}

func TestEnvAllowlist(t *testing.T) {
	p := NewEnvVarProvider(map[string]string{"CONNECT_A": "a", "SECRET_B": "b", "XCONNECT_C": "c"})
	require.NoError(t, p.Configure(map[string]string{AllowlistPatternParam: "CONNECT_.*"}))
	got, err := p.Get("", []string{"CONNECT_A", "SECRET_B", "XCONNECT_C"})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"CONNECT_A": "a"}, got)
	assert.Error(t, NewEnvVarProvider(nil).Configure(map[string]string{AllowlistPatternParam: "("}))
}

// A provider class this worker does not implement, or none at all, is refused (never ignored).
func TestUnknownProviderClass(t *testing.T) {
	_, err := FromWorkerConfig(map[string]string{"config.providers": "vault",
		"config.providers.vault.class": "io.confluent.csid.config.provider.vault.VaultConfigProvider"})
	var ce *ClassError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, err.Error(), "Invalid value io.confluent.csid.config.provider.vault.VaultConfigProvider for configuration config.providers.vault.class")
	_, err = FromWorkerConfig(map[string]string{"config.providers": "file"})
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, err.Error(), "config.providers.file.class")
	tr, err := FromWorkerConfig(map[string]string{"config.providers": " "})
	require.NoError(t, err)
	assert.Nil(t, tr)
}

func TestReverseTransform(t *testing.T) {
	raw := map[string]string{"file": "${file:/p:path}", "password": "${env:PW}", "topics": "t"}
	tasks := []map[string]string{
		{"file": "/tmp/out", "password": "pw", "topics": "t", "task.class": "X"},
		{"file": "/tmp/out", "topics": "t", "derived": "pw"},
	}
	assert.Equal(t, []map[string]string{
		{"file": "${file:/p:path}", "password": "${env:PW}", "topics": "t", "task.class": "X"},
		{"file": "${file:/p:path}", "topics": "t", "derived": "pw"},
	}, ReverseTransform(raw, tasks))
}

func FuzzTransform(f *testing.F) {
	f.Add("${env:A}", "x${env:B}${env:}y")
	f.Add("${a:b:c:d}", "$${}}{${::}")
	env := NewEnvVarProvider(map[string]string{"A": "1", "B": "${env:A}"})
	_ = env.Configure(nil)
	tr := &Transformer{providers: map[string]Provider{"env": env}}
	f.Fuzz(func(t *testing.T, a, b string) {
		out, err := tr.Transform(map[string]string{"a": a, "b": b})
		if err != nil {
			return
		}
		if !HasReference(a) {
			require.Equal(t, a, out["a"])
		}
		// Resolution is one pass: a value that itself looks like a reference is not resolved again.
		if a == "${env:B}" {
			require.Equal(t, "${env:A}", out["a"])
		}
	})
}
