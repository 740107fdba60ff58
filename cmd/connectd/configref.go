package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/configref"
)

// referencePages are the plugins whose configuration reference docs/reference holds, by file name.
var referencePages = []struct {
	File, Title, Class, Guide string
}{
	{"iceberg-sink.md", "Iceberg sink", "org.apache.iceberg.connect.IcebergSinkConnector", "../guides/iceberg-sink.md"},
	{"clickhouse-sink.md", "ClickHouse sink", "com.clickhouse.kafka.connect.ClickHouseSinkConnector", "../guides/clickhouse-sink.md"},
	{"dlq-sink.md", "Dead-letter sink", "io.connectd.connect.dlq.DeadLetterSinkConnector", "../guides/dead-letter-queue.md"},
	{"file-sink.md", "File sink", "org.apache.kafka.connect.file.FileStreamSinkConnector", ""},
}

// configReferenceMain prints the Markdown configuration reference of one plugin (by class or alias), or with
// -dir DIR writes every page of docs/reference into DIR.
func configReferenceMain(reg *connect.Registry, args []string) error {
	switch {
	case len(args) == 2 && args[0] == "-dir":
		for _, page := range referencePages {
			var b bytes.Buffer
			if err := writeConfigReference(&b, reg, page.Class, page.Title, page.Guide); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(args[1], page.File), b.Bytes(), 0o644); err != nil {
				return err
			}
		}
		return nil
	case len(args) == 1:
		return writeConfigReference(os.Stdout, reg, args[0], "", "")
	}
	return fmt.Errorf("usage: connectd config-reference CLASS | -dir DIR")
}

func writeConfigReference(w io.Writer, reg *connect.Registry, class, title, guide string) error {
	p, ok := reg.Lookup(class)
	if !ok {
		return fmt.Errorf("no plugin %q", class)
	}
	c, ok := p.New().(connect.Configurable)
	if !ok {
		return fmt.Errorf("%s has no configuration", p.Class)
	}
	if title == "" {
		title = p.Class
	}
	return configref.Write(w, configref.Plugin{Title: title, Class: p.Class, Aliases: p.Aliases, Version: p.Version, Guide: guide, Def: c.ConfigDef()})
}
