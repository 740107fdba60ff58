package herder

import (
	"fmt"

	"github.com/connectd/connectd/connect"
)

// versionedPluginLoadingError is the JVM's VersionedPluginLoadingException: the installed plugin does not
// satisfy a connector's connector.plugin.version pin.
type versionedPluginLoadingError struct{ msg string }

func (e *versionedPluginLoadingError) Error() string { return e.msg }

func (e *versionedPluginLoadingError) ClassName() string {
	return "org.apache.kafka.connect.runtime.isolation.VersionedPluginLoadingException"
}

// unmatchedVersionMessage is the plugin loader's message for a pin the installed version does not satisfy.
// A worker hosts one version of each plugin, so that is the only one available.
func unmatchedVersionMessage(plugin *connect.Plugin, want *versionRange) string {
	return fmt.Sprintf("Plugin %s not found that matches the version range %s, available versions: [%s]",
		plugin.Class, want, pluginVersion(plugin))
}

// connectorPinError is the plugin loader's verdict on a stored connector config at start
// (Worker.startConnector loads the connector's class through the version range of its pin): validate refuses
// such a config, but one written by another worker (a JVM worker hosting other versions) reaches this worker
// unvalidated, and the JVM fails the connector rather than run a version it was not pinned to. Nil when the
// config has no pin, when the installed plugin satisfies it, or when the class is unknown here (starting it
// reports that).
func connectorPinError(reg *connect.Registry, props map[string]string) error {
	pin, pinned := props[connectorVersionKey]
	want, err := connectorVersionRequirement(pin, pinned)
	if err != nil {
		return &versionedPluginLoadingError{msg: err.Error()}
	}
	if want == nil {
		return nil
	}
	plugin, ok := reg.Lookup(props["connector.class"])
	if !ok || want.contains(pluginVersion(plugin)) {
		return nil
	}
	return &versionedPluginLoadingError{msg: unmatchedVersionMessage(plugin, want)}
}
