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

// taskLoaderError is the JVM's failure of a task whose connector config pins a version the installed plugin does
// not satisfy: Worker.startTask resolves the task's class loader through the connector config's pin (not the
// task config's), and wraps the plugin loader's exception in a ConnectException whose message names the
// connector's class and then its name.
type taskLoaderError struct {
	class, name string
	err         error
}

func (e *taskLoaderError) Error() string {
	return fmt.Sprintf("Failed to get class loader for connector %s, class %s", e.class, e.name)
}

func (e *taskLoaderError) Unwrap() error { return e.err }

func (e *taskLoaderError) ClassName() string {
	return "org.apache.kafka.connect.errors.ConnectException"
}

// taskPinError is the verdict on starting a task of connector name under the connector config props: its
// tasks run the connector's plugin, so a pin that fails the connector (connectorPinError) fails each of its
// tasks too, whatever task configs are stored (a JVM worker hosting the pinned version may have written them).
func taskPinError(reg *connect.Registry, name string, props map[string]string) error {
	if err := connectorPinError(reg, props); err != nil {
		return &taskLoaderError{class: props["connector.class"], name: name, err: err}
	}
	return nil
}
