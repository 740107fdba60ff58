package kafka

import (
	"github.com/IBM/sarama"
	"github.com/xdg-go/scram"
)

// scramClient adapts github.com/xdg-go/scram to sarama.SCRAMClient (RFC 5802/7677, as KIP-84).
type scramClient struct {
	hash scram.HashGeneratorFcn
	conv *scram.ClientConversation
}

func newSCRAMClientGenerator(hash scram.HashGeneratorFcn) func() sarama.SCRAMClient {
	return func() sarama.SCRAMClient { return &scramClient{hash: hash} }
}

// Begin starts a conversation. The JVM client does not SASLprep the password (ScramFormatter
// uses its UTF-8 bytes) and only escapes ',' and '=' in the user name, so neither do we:
// NewClientUnprepped keeps credentials created by kafka-configs/kafka-storage working for
// non-ASCII passwords too.
func (s *scramClient) Begin(user, password, authzID string) error {
	c, err := s.hash.NewClientUnprepped(user, password, authzID)
	if err != nil {
		return err
	}
	s.conv = c.NewConversation()
	return nil
}

func (s *scramClient) Step(challenge string) (string, error) { return s.conv.Step(challenge) }

func (s *scramClient) Done() bool { return s.conv.Done() }
