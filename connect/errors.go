package connect

import (
	"errors"
	"fmt"
)

// RetriableError marks a failure that may succeed if the same operation is tried again, like the JVM's
// RetriableException: a put() returning it gets the same batch redelivered instead of failing the task.
type RetriableError struct{ Err error }

func (e *RetriableError) Error() string { return e.Err.Error() }
func (e *RetriableError) Unwrap() error { return e.Err }

// Retriable wraps err as retriable (nil stays nil).
func Retriable(err error) error {
	if err == nil {
		return nil
	}
	return &RetriableError{Err: err}
}

// Retriablef formats a retriable error.
func Retriablef(format string, args ...any) error {
	return &RetriableError{Err: fmt.Errorf(format, args...)}
}

// IsRetriable reports whether err (or anything it wraps) is retriable.
func IsRetriable(err error) bool {
	var r *RetriableError
	return errors.As(err, &r)
}

// DataError is the JVM's DataException: a value that does not fit its schema or cannot be converted.
type DataError struct{ Err error }

func (e *DataError) Error() string { return e.Err.Error() }
func (e *DataError) Unwrap() error { return e.Err }

// DataErrorf formats a DataError.
func DataErrorf(format string, args ...any) error {
	return &DataError{Err: fmt.Errorf(format, args...)}
}

// IsDataError reports whether err is a DataError.
func IsDataError(err error) bool {
	var d *DataError
	return errors.As(err, &d)
}

// ConfigError is the JVM's ConfigException: a bad configuration value.
type ConfigError struct {
	Name    string
	Value   any
	Message string
}

func (e *ConfigError) Error() string {
	if e.Name == "" {
		return e.Message
	}
	if e.Message == "" {
		return fmt.Sprintf("Invalid value %v for configuration %s", e.Value, e.Name)
	}
	return fmt.Sprintf("Invalid value %v for configuration %s: %s", e.Value, e.Name, e.Message)
}

// ErrorClassName gives a JVM-style exception class name for an error, used in traces, status and DLQ
// headers (`__connect.errors.exception.class.name`). Errors may implement ClassNamer to choose their own.
func ErrorClassName(err error) string {
	var c ClassNamer
	if errors.As(err, &c) {
		return c.ClassName()
	}
	switch {
	case IsRetriable(err):
		return "org.apache.kafka.connect.errors.RetriableException"
	case IsDataError(err):
		return "org.apache.kafka.connect.errors.DataException"
	}
	var ce *ConfigError
	if errors.As(err, &ce) {
		return "org.apache.kafka.common.config.ConfigException"
	}
	return "org.apache.kafka.connect.errors.ConnectException"
}

// ClassNamer lets an error name its JVM-style class.
type ClassNamer interface{ ClassName() string }
