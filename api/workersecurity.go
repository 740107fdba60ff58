package api

import (
	"crypto/tls"
	"fmt"
	"strings"
)

// JAASConfigProperty is the JVM system property naming the JAAS login configuration file. connectd reads it
// from the worker properties or, as the JVM container images pass it, from -D in KAFKA_OPTS.
const JAASConfigProperty = "java.security.auth.login.config"

// SecurityOptions reads the worker's REST security settings: the TLS settings of https listeners
// (listeners.https.*, admin.listeners.https.*, each falling back to the worker's ssl.*), the TLS client used to
// reach other workers (listeners.https.* or ssl.*), admin.listeners, and rest.extension.classes. Every REST
// extension named must be one this worker implements; anything it cannot honour is an error, never ignored.
// kafkaOpts is the KAFKA_OPTS environment value.
func SecurityOptions(props map[string]string, kafkaOpts string) ([]Option, error) {
	var opts []Option

	listeners := splitTrim(props["listeners"])
	admin, adminSet := props["admin.listeners"]
	var adminListeners []string
	if adminSet {
		adminListeners = splitTrim(admin)
		if adminListeners == nil {
			adminListeners = []string{} // set but empty: no admin endpoints
		}
		opts = append(opts, WithAdminListeners(adminListeners))
	}

	var mainTLS, adminTLS *tls.Config
	var err error
	if hasHTTPS(listeners) {
		if mainTLS, err = serverTLSConfig(tlsProps(props, listenersHTTPSPrefix), listenersHTTPSPrefix); err != nil {
			return nil, err
		}
	}
	if hasHTTPS(adminListeners) {
		if adminTLS, err = serverTLSConfig(tlsProps(props, adminListenersHTTPSPrefix), adminListenersHTTPSPrefix); err != nil {
			return nil, err
		}
	}
	opts = append(opts, WithListenerTLS(mainTLS, adminTLS))
	client, err := clientTLSConfig(tlsProps(props, listenersHTTPSPrefix))
	if err != nil {
		return nil, err
	}
	opts = append(opts, WithClientTLS(client))

	for _, class := range splitTrim(props["rest.extension.classes"]) {
		if class != BasicAuthExtensionClass {
			return nil, fmt.Errorf("rest.extension.classes: %s is not a REST extension this worker implements (supported: %s)", class, BasicAuthExtensionClass)
		}
		path, err := jaasConfigPath(props, kafkaOpts)
		if err != nil {
			return nil, err
		}
		a, err := loadBasicAuth(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", BasicAuthExtensionClass, err)
		}
		opts = append(opts, func(s *Server) { s.auth = a })
	}
	return opts, nil
}

func hasHTTPS(listeners []string) bool {
	for _, l := range listeners {
		if strings.HasPrefix(strings.ToLower(l), "https://") {
			return true
		}
	}
	return false
}

// jaasConfigPath finds java.security.auth.login.config in the worker properties or in KAFKA_OPTS; both set to
// different files is an error.
func jaasConfigPath(props map[string]string, kafkaOpts string) (string, error) {
	fromProps := strings.TrimSpace(props[JAASConfigProperty])
	fromOpts := ""
	for _, f := range strings.Fields(kafkaOpts) {
		if v, ok := strings.CutPrefix(f, "-D"+JAASConfigProperty+"="); ok {
			fromOpts = v
		}
	}
	switch {
	case fromProps != "" && fromOpts != "" && fromProps != fromOpts:
		return "", fmt.Errorf("%s: the worker property %s=%s and KAFKA_OPTS -D%s=%s disagree", BasicAuthExtensionClass, JAASConfigProperty, fromProps, JAASConfigProperty, fromOpts)
	case fromProps != "":
		return fromProps, nil
	case fromOpts != "":
		return fromOpts, nil
	}
	return "", fmt.Errorf("%s: Failed to retrieve JAAS configuration: set the worker property %s or -D%s=... in KAFKA_OPTS", BasicAuthExtensionClass, JAASConfigProperty, JAASConfigProperty)
}
