package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/connectd/connectd/api"
)

// `connectd version` names what GET / reports: the Kafka Connect version and the build commit.
func TestVersionText(t *testing.T) {
	assert.Equal(t, "connectd "+Version+"\nversion: "+api.ConnectVersion+" (Kafka Connect)\ncommit: "+api.BuildCommit()+"\n", versionText())
}
