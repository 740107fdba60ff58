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

// loaderError is the JVM's failure to start a connector or one of its tasks under a pin the installed plugin
// does not satisfy: Worker.startConnector and Worker.startTask both resolve the class loader through the
// connector config's pin (a task's own config is not consulted), and wrap the plugin loader's exception in a
// ConnectException whose message names the connector's class and then its name.
type loaderError struct {
	class, name string
	err         error
}

func (e *loaderError) Error() string {
	return fmt.Sprintf("Failed to get class loader for connector %s, class %s", e.class, e.name)
}

func (e *loaderError) Unwrap() error { return e.err }

func (e *loaderError) ClassName() string { return "org.apache.kafka.connect.errors.ConnectException" }

// pinError is the verdict on starting connector name, or a task of it, under the connector config props: nil,
// or the loaderError of connectorPinError. A task fails on the connector's pin whatever task configs are stored
// (a JVM worker hosting the pinned version may have written them).
func pinError(reg *connect.Registry, name string, props map[string]string) error {
	if err := connectorPinError(reg, props); err != nil {
		return &loaderError{class: props["connector.class"], name: name, err: err}
	}
	return nil
}
