package connect

// Transformation is a single message transform (SMT). Apply returns the transformed record, or nil to drop
// it. Apply must not modify its input; derive a new record with SinkRecord.NewRecord.
type Transformation interface {
	Configurable
	Configure(configs map[string]string) error
	Apply(record *SinkRecord) (*SinkRecord, error)
	Close() error
}

// Predicate decides whether a transformation applies to a record (KIP-585).
type Predicate interface {
	Configurable
	Configure(configs map[string]string) error
	Test(record *SinkRecord) (bool, error)
	Close() error
}
