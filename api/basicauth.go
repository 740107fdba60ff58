package api

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"

	"github.com/connectd/connectd/internal/props"
)

// Class names of the JVM's basic authentication REST extension, accepted in rest.extension.classes and in the
// JAAS configuration so that a JVM worker's files work unchanged.
const (
	BasicAuthExtensionClass = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
	PropertyFileLoginModule = "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule"
	jaasConnectSection      = "KafkaConnect"
	msgUnauthorized         = "User cannot access the resource."
)

// basicAuth is BasicAuthSecurityRestExtension's JaasBasicAuthFilter with the KafkaConnect section's
// PropertyFileLoginModule entries. As in the JVM, each credentials file is read once (at start here, at the
// first request there) and an empty one lets every request through.
type basicAuth struct {
	files []credentialFile
}

type credentialFile struct {
	path  string
	users map[string]string
}

// loadBasicAuth reads the JAAS configuration's KafkaConnect section and its credentials files. Any other login
// module is refused: connectd cannot run JVM login modules.
func loadBasicAuth(jaasPath string) (*basicAuth, error) {
	mods, err := readJAASSection(jaasPath, jaasConnectSection)
	if err != nil {
		return nil, err
	}
	if len(mods) == 0 {
		return nil, fmt.Errorf("JAAS configuration %s: the %s section has no login module", jaasPath, jaasConnectSection)
	}
	a := &basicAuth{}
	for _, m := range mods {
		if m.class != PropertyFileLoginModule {
			return nil, fmt.Errorf("JAAS configuration %s: login module %s is not supported (only %s)", jaasPath, m.class, PropertyFileLoginModule)
		}
		file := m.options["file"]
		if strings.TrimSpace(file) == "" {
			return nil, fmt.Errorf("JAAS configuration %s: Property Credentials file must be specified", jaasPath)
		}
		users, err := props.Load(file)
		if err != nil {
			return nil, fmt.Errorf("Error loading Property Credentials file %s: %w", file, err)
		}
		a.files = append(a.files, credentialFile{path: file, users: users})
	}
	return a, nil
}

// emptyFiles lists credentials files without any user (they let every request through, as on the JVM).
func (a *basicAuth) emptyFiles() []string {
	var out []string
	for _, f := range a.files {
		if len(f.users) == 0 {
			out = append(out, f.path)
		}
	}
	return out
}

// authenticate checks an Authorization header value. A malformed Base64 payload is an error (the JVM answers
// it with a 500: the decoder's exception escapes the filter); missing or wrong credentials give false.
func (a *basicAuth) authenticate(header string) (bool, error) {
	user, password, present, err := basicCredentials(header)
	if err != nil {
		return false, err
	}
	// LoginContext: a PropertyFileLoginModule that does not authenticate is ignored, whatever its flag; the
	// login succeeds when one module does.
	for _, f := range a.files {
		if len(f.users) == 0 {
			return true, nil
		}
		if !present {
			continue
		}
		if want, ok := f.users[user]; ok && subtle.ConstantTimeCompare([]byte(want), []byte(password)) == 1 {
			return true, nil
		}
	}
	return false, nil
}

// basicCredentials parses "Basic base64(user:password)" as JaasBasicAuthFilter.BasicAuthCredentials does.
func basicCredentials(header string) (user, password string, present bool, err error) {
	if header == "" {
		return "", "", false, nil
	}
	sp := strings.IndexByte(header, ' ')
	if sp <= 0 || !strings.EqualFold(header[:sp], "Basic") {
		return "", "", false, nil
	}
	raw, err := javaBase64Decode(header[sp+1:])
	if err != nil {
		return "", "", false, err
	}
	decoded := strings.ToValidUTF8(string(raw), "\uFFFD")
	i := strings.IndexByte(decoded, ':')
	if i <= 0 {
		return "", "", false, nil
	}
	return decoded[:i], decoded[i+1:], true, nil
}

// authorize answers 401 (or 500 for a malformed header) and reports false unless the request may proceed.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) bool {
	if s.auth == nil {
		return true
	}
	ok, err := s.auth.authenticate(r.Header.Get("Authorization"))
	if err != nil {
		writeError(w, newRestError(http.StatusInternalServerError, err.Error()))
		return false
	}
	if ok {
		return true
	}
	s.log.Debug("Request failed authentication", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
	ct := "application/json"
	if r.Method == http.MethodOptions {
		ct = "text/plain"
	}
	w.Header().Set("Content-Type", ct)
	// The JVM's filter sends no challenge; RFC 7235 requires one on a 401, and clients such as curl --anyauth and
	// browsers need it to offer credentials. JVM clients ignore the extra header.
	w.Header().Set("WWW-Authenticate", `Basic realm="connect", charset="UTF-8"`)
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write([]byte(msgUnauthorized))
	return false
}
