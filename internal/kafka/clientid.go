package kafka

import (
	"crypto/sha256"
	"encoding/hex"
)

// MaxClientIDBytes is the longest client.id the Kafka clients send (franz-go's limit; the JVM worker derives
// ids from connector names, which Kafka Connect does not bound).
const MaxClientIDBytes = 256

// ClientID fits id into MaxClientIDBytes: a longer one keeps its first bytes (on a UTF-8 boundary) and ends
// in a hash of the whole, so the same connector always gets the same id and two long names sharing a prefix
// stay apart.
func ClientID(id string) string {
	if len(id) <= MaxClientIDBytes {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	suffix := "-" + hex.EncodeToString(sum[:8])
	keep := MaxClientIDBytes - len(suffix)
	for keep > 0 && id[keep]&0xC0 == 0x80 { // do not cut a UTF-8 sequence
		keep--
	}
	return id[:keep] + suffix
}
