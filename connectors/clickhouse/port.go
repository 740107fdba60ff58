package clickhouse

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/connectd/connectd/connect"
)

// nativePort checks the configured port against ClickHouse's HTTP interface ports. The official sink speaks
// HTTP, so its configurations name 8123 or 8443; this sink speaks the native protocol (9000, 9440 with TLS), and
// connecting it to an HTTP port would fail with an obscure handshake error. Such a port is mapped to its native
// counterpart unless port.mapHttpPorts says otherwise (true maps, false uses the port as given: a native
// interface configured on that port) or port.refuseHttpPorts=true refuses it. note says what was mapped (empty
// when nothing was), for the connector's WARN and status.
func nativePort(port int, mapHTTPPorts, refuseHTTPPorts string) (native int, note string, err error) {
	native, isHTTP := map[int]int{8123: 9000, 8443: 9440}[port]
	if !isHTTP {
		return port, "", nil
	}
	kind := "HTTP"
	if port == 8443 {
		kind = "HTTPS"
	}
	switch strings.ToLower(strings.TrimSpace(mapHTTPPorts)) {
	case "true":
		return native, mappedNote(port, kind, native), nil
	case "false":
		return port, "", nil
	}
	if strings.EqualFold(strings.TrimSpace(refuseHTTPPorts), "true") {
		return 0, "", &connect.ConfigError{Name: keyPort, Value: port, Message: fmt.Sprintf(
			"%d is ClickHouse's %s port, but this sink speaks the native protocol: use port 9000 (or 9440 with ssl=true), "+
				"or set %s=true to map 8123 to 9000 and 8443 to 9440 (%s=false uses the port as given)",
			port, kind, keyPortMapHTTP, keyPortMapHTTP)}
	}
	return native, mappedNote(port, kind, native), nil
}

func mappedNote(port int, kind string, native int) string {
	return fmt.Sprintf("port %d is ClickHouse's %s port; this sink speaks the native protocol and connects to port %d instead "+
		"(%s=false uses %d as given, %s=true refuses it)", port, kind, native, keyPortMapHTTP, port, keyPortRefuseHTTP)
}

// Validate adds the port check of ParseConfig to /config/validate.
func (c *Connector) Validate(props map[string]string) []connect.ConfigValue {
	port, err := strconv.Atoi(strings.TrimSpace(props[keyPort]))
	if err != nil {
		return nil // the definition reports a missing or malformed port
	}
	if _, _, err := nativePort(port, props[keyPortMapHTTP], props[keyPortRefuseHTTP]); err != nil {
		return []connect.ConfigValue{{Name: keyPort, Value: props[keyPort], Errors: []string{err.Error()}, Visible: true}}
	}
	return nil
}

var _ connect.ConfigValidator = (*Connector)(nil)
