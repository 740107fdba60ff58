package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/jvm"
	"github.com/connectd/connectd/internal/herder"
)

// Messages copied from the JVM worker.
const (
	msgNoLeader       = "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."
	msgConflict       = "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
	msgStaleConfig    = "Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)"
	msgRebalanceGET   = "Request cannot be completed because a rebalance is expected"
	msgTimedOut       = "Request timed out"
	msgNotFound       = "HTTP 404 Not Found"
	msgNotAllowed     = "HTTP 405 Method Not Allowed"
	msgUnsupported    = "HTTP 415 Unsupported Media Type"
	msgNotAcceptable  = "HTTP 406 Not Acceptable"
	msgStandaloneTask = "Kafka Connect in standalone mode does not support externally setting task configurations."
)

// restError is a response decided by the REST layer itself (the JVM's ConnectRestException).
type restError struct {
	status int
	code   int
	msg    string
}

func (e *restError) Error() string { return e.msg }

func newRestError(status int, msg string) *restError {
	return &restError{status: status, code: status, msg: msg}
}

type errorBody struct {
	ErrorCode int     `json:"error_code"`
	Message   *string `json:"message"`
}

// errorStatus maps an error to the JVM's status, error_code and message (ConnectExceptionMapper).
func errorStatus(err error) (status, code int, msg *string) {
	str := func(s string) *string { return &s }
	var re *restError
	if errors.As(err, &re) {
		return re.status, re.code, str(re.msg)
	}
	var he *herder.RestError
	if errors.As(err, &he) {
		st := he.Status
		if st == 0 {
			st = kindStatus(he.Kind)
		}
		return st, st, str(he.Message)
	}
	var nl *herder.NotLeaderError
	if errors.As(err, &nl) {
		return http.StatusConflict, http.StatusConflict, str(nl.Error())
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return 500, 500, str(msgTimedOut)
	}
	var pnf *connect.PluginNotFoundError
	if errors.As(err, &pnf) {
		return 500, 500, str(err.Error())
	}
	var je *jvm.JacksonError
	if errors.As(err, &je) {
		return 500, 500, str(je.Msg)
	}
	if st := kindStatus(err); st != 0 {
		return st, st, str(err.Error())
	}
	return 500, 500, str(err.Error())
}

func kindStatus(err error) int {
	switch {
	case errors.Is(err, herder.ErrNotFound):
		return 404
	case errors.Is(err, herder.ErrAlreadyExists), errors.Is(err, herder.ErrConflict):
		return 409
	case errors.Is(err, herder.ErrBadRequest):
		return 400
	case errors.Is(err, herder.ErrForbidden):
		return 403
	case errors.Is(err, herder.ErrNotReady):
		return 503
	case errors.Is(err, herder.ErrRebalancing):
		return 500
	}
	return 0
}

// writeJSON writes v compactly, without HTML escaping (as Jackson does).
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status = 500
		buf.Reset()
		_ = json.NewEncoder(&buf).Encode(errorBody{ErrorCode: 500, Message: ptr(err.Error())})
	}
	b := bytes.TrimRight(buf.Bytes(), "\n")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeError(w http.ResponseWriter, err error) {
	status, code, msg := errorStatus(err)
	writeJSON(w, status, errorBody{ErrorCode: code, Message: msg})
}

// writeUntypedError answers a request no resource matches as Jersey does: the JVM's error body without a
// Content-Type header (its exception mapper builds the response without a media type).
func writeUntypedError(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(errorBody{ErrorCode: status, Message: &msg})
	w.Header()["Content-Type"] = nil // no sniffed type either
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func ptr[T any](v T) *T { return &v }
