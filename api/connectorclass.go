package api

import (
	"fmt"
	"strings"

	"github.com/connectd/connectd/connect"
)

// connectorClassError is the JVM's answer to a connector config naming a class the worker cannot load: AbstractHerder
// turns Plugins.newConnector's ConnectException into a 400 whose message lists the available connectors as
// PluginDesc strings. A source connector class gets a 400 that says why: this runtime hosts sink connectors only.
func (s *Server) connectorClassError(pnf *connect.PluginNotFoundError) error {
	available := s.availableConnectors()
	if isSourceConnectorClass(pnf.Name) {
		return newRestError(400, fmt.Sprintf("%s is a source connector; this runtime hosts sink connectors only, available connectors are: %s",
			pnf.Name, available))
	}
	return newRestError(400, fmt.Sprintf("%s, available connectors are: %s", pnf.Error(), available))
}

// availableConnectors is Plugins.pluginNames over the connector plugins: PluginDesc.toString joined by ", ", in
// class name order as the JVM's sorted set.
func (s *Server) availableConnectors() string {
	var descs []string
	for _, p := range s.registry.Plugins() {
		if p.Type != connect.PluginSink && p.Type != connect.PluginSource {
			continue
		}
		descs = append(descs, fmt.Sprintf("PluginDesc{klass=class %s, name='%s', version='%s', encodedVersion=%s, type=%s, typeName='%s', location='classpath'}",
			p.Class, p.Class, p.Version, p.Version, p.Type, p.Type))
	}
	return strings.Join(descs, ", ")
}

// isSourceConnectorClass recognizes the source connectors users most often bring from a JVM cluster: Kafka's own
// (FileStreamSource, MirrorMaker 2), Debezium's, and any class named *SourceConnector.
func isSourceConnectorClass(class string) bool {
	class = strings.TrimSpace(class)
	simple := class[strings.LastIndexByte(class, '.')+1:]
	switch {
	case strings.HasPrefix(class, "io.debezium.connector."):
		return true
	case strings.HasPrefix(class, "org.apache.kafka.connect.mirror."):
		return true
	case strings.HasSuffix(simple, "SourceConnector"), strings.HasSuffix(simple, "Source"):
		return true
	}
	return false
}
