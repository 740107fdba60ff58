package api

import (
	"context"
	"net/http"

	"github.com/connectd/connectd/connect/jvm"
	"github.com/connectd/connectd/internal/herder"
)

// GET, PATCH and DELETE /connectors/{name}/offsets: a connector's consumer-group offsets (the JVM's ConnectorOffsets).
func (s *Server) getOffsets(w http.ResponseWriter, r *http.Request) {
	name := pathVar(r, "connector")
	offs, err := read(s, r, func(ctx context.Context) (*herder.ConnectorOffsets, error) { return s.h.ConnectorOffsets(ctx, name) })
	if err != nil {
		writeError(w, err)
		return
	}
	if offs == nil {
		offs = &herder.ConnectorOffsets{}
	}
	if offs.Offsets == nil {
		offs.Offsets = []herder.ConnectorOffset{}
	}
	writeJSON(w, 200, offs)
}

type messageBody struct {
	Message string `json:"message"`
}

func (s *Server) alterOffsets(w http.ResponseWriter, r *http.Request) {
	name := pathVar(r, "connector")
	body, err := readBody(r)
	if err != nil {
		writeError(w, err)
		return
	}
	v, stopped, err := parseFitting(body, fitsBean)
	if err != nil {
		writeError(w, withOffsetsChain(withChain(err, classOffsets)))
		return
	}
	if v == nil || v.Kind == jvm.Null {
		writeError(w, newRestError(500, npeOffsets))
		return
	}
	p := &jparser{b: body}
	entries, _, err := p.bindOffsets(v)
	err = boundStopped(stopped, err)
	if err == nil {
		err = jvm.TrailingTokens(body, v.End, classOffsets)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	if len(entries) == 0 {
		writeError(w, newRestError(400, "Partitions / offsets need to be provided for an alter offsets request"))
		return
	}
	offs := herder.ConnectorOffsets{}
	for _, e := range entries {
		offs.Offsets = append(offs.Offsets, herder.ConnectorOffset{Partition: e.Partition, Offset: e.Offset})
	}
	var msg string
	err = s.call(r, true, func(ctx context.Context) error {
		var e error
		msg, e = s.h.AlterConnectorOffsets(ctx, name, offs)
		return e
	})
	s.finish(w, r, err, body, nil, 200, messageBody{msg})
}

func (s *Server) resetOffsets(w http.ResponseWriter, r *http.Request) {
	name := pathVar(r, "connector")
	var msg string
	err := s.call(r, true, func(ctx context.Context) error {
		var e error
		msg, e = s.h.ResetConnectorOffsets(ctx, name)
		return e
	})
	s.finish(w, r, err, nil, nil, 200, messageBody{msg})
}
