package herder

// The session key the leader publishes for signing internal requests (connect.protocol=sessioned).

import (
	"crypto/rand"
	"log/slog"
	"time"

	"github.com/connectd/connectd/internal/group"
	"github.com/connectd/connectd/internal/store"
)

// ensureSessionKey has the leader publish a session key when none exists or it expired (sessioned protocol).
func (d *Distributed) ensureSessionKey() {
	if self, _ := d.isLeader(); !self || d.member.ProtocolVersion() < group.V2 {
		return
	}
	k := d.configs.SessionKey()
	if k != nil && time.Since(k.Created) < d.cfg.KeyTTL {
		return
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	if err := d.configs.PutSessionKey(store.SessionKey{Key: key, Algorithm: "HmacSHA256", Created: time.Now()}); err != nil {
		slog.Warn("writing the session key failed", "error", err)
	}
}
