package herder

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSameTaskConfigsRewritesOldTaskClass(t *testing.T) {
	gen := []map[string]string{{"task.class": "org.apache.kafka.connect.file.FileStreamSinkTask", "topics": "t"}}
	// written by an older connectd: no JVM worker can load it, so the configs are rewritten once
	old := []map[string]string{{"task.class": "org.apache.kafka.connect.file.FileStreamSinkConnector$Task", "topics": "t"}}
	assert.False(t, sameTaskConfigs(gen, old))
	// written by a JVM worker (or already rewritten): left alone
	jvm := []map[string]string{{"task.class": "org.apache.kafka.connect.file.FileStreamSinkTask", "topics": "t"}}
	assert.True(t, sameTaskConfigs(gen, jvm))
	custom := []map[string]string{{"task.class": "com.example.OtherTask", "topics": "t"}}
	assert.True(t, sameTaskConfigs(gen, custom), "a class another runtime wrote is not ours to rewrite")
	assert.False(t, sameTaskConfigs(gen, []map[string]string{{"task.class": "org.apache.kafka.connect.file.FileStreamSinkTask", "topics": "u"}}))
}
