package worker

import (
	"fmt"
	"strings"

	"github.com/connectd/connectd/connect"
)

// transformStep is one configured SMT with its optional predicate.
type transformStep struct {
	alias  string
	class  string
	t      connect.Transformation
	pred   connect.Predicate
	negate bool
}

// transformChain applies SMTs in order; each step runs under the error handler (stage TRANSFORMATION).
type transformChain []transformStep

// buildTransformChain instantiates `transforms` and `predicates` from a connector config, as the JVM's
// ConnectorConfig.transformationStages does.
func buildTransformChain(reg *connect.Registry, props map[string]string) (transformChain, error) {
	preds := map[string]connect.Predicate{}
	for _, alias := range splitList(props["predicates"]) {
		class := props["predicates."+alias+".type"]
		if class == "" {
			return nil, &connect.ConfigError{Message: fmt.Sprintf("Missing required configuration \"predicates.%s.type\" which has no default value.", alias)}
		}
		p, err := reg.NewPredicate(class)
		if err != nil {
			return nil, &connect.ConfigError{Name: "predicates." + alias + ".type", Value: class, Message: err.Error()}
		}
		if err := p.Configure(connect.WithPrefix(props, "predicates."+alias+".")); err != nil {
			return nil, fmt.Errorf("configuring predicate %s: %w", alias, err)
		}
		preds[alias] = p
	}
	var chain transformChain
	for _, alias := range splitList(props["transforms"]) {
		prefix := "transforms." + alias + "."
		class := props[prefix+"type"]
		if class == "" {
			return nil, &connect.ConfigError{Message: fmt.Sprintf("Missing required configuration \"%stype\" which has no default value.", prefix)}
		}
		t, err := reg.NewTransformation(class)
		if err != nil {
			return nil, &connect.ConfigError{Name: prefix + "type", Value: class, Message: err.Error()}
		}
		if err := t.Configure(connect.WithPrefix(props, prefix)); err != nil {
			return nil, fmt.Errorf("configuring transformation %s: %w", alias, err)
		}
		if p, ok := reg.Lookup(class); ok {
			class = p.Class
		}
		step := transformStep{alias: alias, class: class, t: t}
		if pa := props[prefix+"predicate"]; pa != "" {
			p, ok := preds[pa]
			if !ok {
				return nil, &connect.ConfigError{Name: prefix + "predicate", Value: pa, Message: "Undefined predicate"}
			}
			step.pred = p
			step.negate = strings.EqualFold(props[prefix+"negate"], "true")
		}
		chain = append(chain, step)
	}
	return chain, nil
}

// applyStep runs one step: the predicate decides whether the SMT applies.
func (s *transformStep) apply(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	if s.pred != nil {
		ok, err := s.pred.Test(r)
		if err != nil {
			return nil, err
		}
		if ok == s.negate {
			return r, nil
		}
	}
	return s.t.Apply(r)
}

func (c transformChain) close() {
	for _, s := range c {
		s.t.Close()
		if s.pred != nil {
			s.pred.Close()
		}
	}
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
