package api

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// What every REST request goes through before its handler: authentication, media types, CORS and the
// configured response headers.

// authenticated guards a handler outside the JVM's API (e.g. /metrics) with the REST authentication.
func (s *Server) authenticated(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.authorize(w, r) {
			h.ServeHTTP(w, r)
		}
	})
}

func isJSONMediaType(ct string) bool {
	mt := strings.ToLower(strings.TrimSpace(strings.SplitN(ct, ";", 2)[0]))
	return mt == "application/json" || mt == "application/*" || mt == "*/*"
}

func acceptsJSON(values []string) bool {
	if len(values) == 0 {
		return true
	}
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			mt := strings.ToLower(strings.TrimSpace(strings.SplitN(part, ";", 2)[0]))
			switch mt {
			case "", "*/*", "*", "application/*", "application/json":
				return true
			}
		}
	}
	return false
}

// wrap adds trailing-slash tolerance, CORS and configured response headers.
func (s *Server) wrap(h http.Handler) http.Handler {
	origins := splitTrim(s.allowOrigin)
	methods := s.allowMethods
	if strings.TrimSpace(methods) == "" {
		methods = "GET,POST,HEAD"
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.URL.Path) > 1 && strings.HasSuffix(r.URL.Path, "/") {
			r.URL.Path = strings.TrimRight(r.URL.Path, "/")
			if r.URL.RawPath != "" {
				r.URL.RawPath = strings.TrimRight(r.URL.RawPath, "/")
			}
			if r.URL.Path == "" {
				r.URL.Path = "/"
			}
		}
		applyHeaderRules(w.Header(), s.headerRules, s.now())
		if len(origins) > 0 {
			if origin := r.Header.Get("Origin"); origin != "" && originAllowed(origins, origin) {
				w.Header().Set("Access-Control-Allow-Origin", origin)
				w.Header().Set("Access-Control-Allow-Credentials", "true")
				w.Header().Add("Vary", "Origin")
				if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
					reqMethod := r.Header.Get("Access-Control-Request-Method")
					if containsFold(splitTrim(methods), reqMethod) {
						w.Header().Set("Access-Control-Allow-Methods", methods)
						w.Header().Set("Access-Control-Allow-Headers", "X-Requested-With,Content-Type,Accept,Origin")
						w.Header().Set("Access-Control-Max-Age", "1800")
					}
					w.WriteHeader(http.StatusOK)
					return
				}
			}
		}
		h.ServeHTTP(w, r)
	})
}

func splitTrim(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func containsFold(list []string, v string) bool {
	for _, x := range list {
		if strings.EqualFold(x, v) {
			return true
		}
	}
	return false
}

// originAllowed follows Jetty's CrossOriginFilter: "*" allows any origin, and "*" inside an entry matches
// any characters.
func originAllowed(allowed []string, origin string) bool {
	for _, a := range allowed {
		if a == "*" || a == origin {
			return true
		}
		if strings.Contains(a, "*") {
			re := "^" + strings.ReplaceAll(regexp.QuoteMeta(a), `\*`, ".*") + "$"
			if ok, _ := regexp.MatchString(re, origin); ok {
				return true
			}
		}
	}
	return false
}

type headerRule struct {
	action, name, value string
}

var headerActions = map[string]bool{"set": true, "add": true, "setDate": true, "addDate": true}

func parseHeaderConfig(cfg string) ([]headerRule, error) {
	var out []headerRule
	for _, item := range splitTrim(cfg) {
		parts := strings.SplitN(item, " ", 2)
		if len(parts) != 2 || !headerActions[strings.TrimSpace(parts[0])] {
			return nil, fmt.Errorf("Invalid header config '%s'", item)
		}
		nv := strings.SplitN(strings.TrimSpace(parts[1]), ":", 2)
		if len(nv) != 2 || strings.TrimSpace(nv[0]) == "" {
			return nil, fmt.Errorf("Invalid header config '%s'", item)
		}
		out = append(out, headerRule{action: strings.TrimSpace(parts[0]), name: strings.TrimSpace(nv[0]), value: strings.TrimSpace(nv[1])})
	}
	return out, nil
}

func applyHeaderRules(h http.Header, rules []headerRule, now time.Time) {
	for _, r := range rules {
		v := r.value
		if r.action == "setDate" || r.action == "addDate" {
			ms, _ := strconv.ParseInt(v, 10, 64)
			v = now.Add(time.Duration(ms) * time.Millisecond).UTC().Format(http.TimeFormat)
		}
		switch r.action {
		case "set", "setDate":
			h.Set(r.name, v)
		default:
			h.Add(r.name, v)
		}
	}
}
