package api

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"hash"
	"net/http"
	"strings"

	"github.com/connectd/connectd/internal/herder"
)

// The internal endpoint through which workers hand task configs to the leader, signed with the session key.

const (
	signatureHeader          = "X-Connect-Authorization"
	signatureAlgorithmHeader = "X-Connect-Request-Signature-Algorithm"
)

func macFor(alg string) (func() hash.Hash, bool) {
	switch alg {
	case "HmacSHA1":
		return sha1.New, true
	case "HmacSHA224":
		return sha256.New224, true
	case "HmacSHA256":
		return sha256.New, true
	case "HmacSHA384":
		return sha512.New384, true
	case "HmacSHA512":
		return sha512.New, true
	}
	return nil, false
}

// Sign computes the X-Connect-Authorization value for body (for the distributed herder's client).
func Sign(key, body []byte, algorithm string) (string, error) {
	newHash, ok := macFor(algorithm)
	if !ok {
		return "", fmt.Errorf("Algorithm %s not available", algorithm)
	}
	m := hmac.New(newHash, key)
	m.Write(body)
	return base64.StdEncoding.EncodeToString(m.Sum(nil)), nil
}

// SignRequest adds the signature headers to an internal request.
func SignRequest(req *http.Request, key, body []byte, algorithm string) error {
	sig, err := Sign(key, body, algorithm)
	if err != nil {
		return err
	}
	req.Header.Set(signatureHeader, sig)
	req.Header.Set(signatureAlgorithmHeader, algorithm)
	return nil
}

func (s *Server) putTaskConfigs(w http.ResponseWriter, r *http.Request) {
	name := pathVar(r, "connector")
	// Everything the headers decide is decided before the body is read: the endpoint is open without
	// credentials, so an unsigned body is never parsed where signatures are required.
	// InternalRequestSignature.fromHeaders
	alg, encoded := r.Header.Get(signatureAlgorithmHeader), r.Header.Get(signatureHeader)
	var signature []byte
	var err error
	signed := alg != "" && encoded != ""
	if signed {
		if _, ok := macFor(alg); !ok {
			writeError(w, newRestError(400, fmt.Sprintf("Algorithm %s not available", alg)))
			return
		}
		if signature, err = javaBase64Decode(encoded); err != nil {
			writeError(w, newRestError(400, err.Error()))
			return
		}
	}
	putter, ok := s.h.(herder.TaskConfigPutter)
	if !ok {
		writeError(w, newRestError(500, msgStandaloneTask))
		return
	}
	var key []byte
	verify := false
	if ks, ok := s.h.(herder.SessionKeySource); ok {
		var algorithms []string
		key, algorithms, verify = ks.SessionKey()
		if verify {
			switch {
			case !signed:
				writeError(w, newRestError(400, "Internal request missing required signature"))
				return
			case !containsExact(algorithms, alg):
				writeError(w, newRestError(400, fmt.Sprintf("This worker does not support the '%s' key signing algorithm used by other workers. "+
					"This worker is currently configured to use: [%s]. "+
					"Check that all workers' configuration files permit the same set of signature algorithms, "+
					"and correct any misconfigured worker and restart it.", alg, strings.Join(algorithms, ", "))))
				return
			case key == nil:
				writeError(w, newRestError(503, "This worker is still starting up and has not been able to read a session key from the config topic yet"))
				return
			}
		}
	}
	body, err := readBody(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if verify {
		expected, _ := Sign(key, body, alg)
		want, _ := base64.StdEncoding.DecodeString(expected)
		if !hmac.Equal(want, signature) {
			writeError(w, newRestError(403, "Internal request contained invalid signature."))
			return
		}
	}
	v, stopped, err := parseFitting(body, fitsTaskConfigs)
	if err != nil {
		writeError(w, err)
		return
	}
	p := &jparser{b: body}
	configs, err := p.bindTaskConfigs(v)
	err = boundStopped(stopped, err)
	if err != nil {
		writeError(w, err)
		return
	}
	err = s.call(r, true, func(ctx context.Context) error { return putter.PutTaskConfigs(ctx, name, configs) })
	if s.maybeForward(w, r, err, body, nil, "", signatureHeader, signatureAlgorithmHeader) {
		return
	}
	if err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(204)
}

func containsExact(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
