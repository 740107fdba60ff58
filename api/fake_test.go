package api

import (
	"context"
	"sort"
	"sync"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/herder"
)

// fakeHerder is an in-memory, deterministic Herder with the standalone herder's messages.
type fakeHerder struct {
	mu         sync.Mutex
	configs    map[string]map[string]string
	targets    map[string]herder.TargetState
	topics     map[string][]string
	notReady   bool
	clusterID  string
	notLeader  *herder.NotLeaderError // when set, leader-only writes fail with it
	rebalances int                    // number of calls that still fail with ErrRebalancing
	block      bool                   // ConnectorInfo blocks until ctx ends
	taskPuts   [][]map[string]string
	sessionKey []byte
	keyNeeded  bool
	loggerSets []string
}

func newFakeHerder() *fakeHerder {
	return &fakeHerder{
		configs:   map[string]map[string]string{},
		targets:   map[string]herder.TargetState{},
		topics:    map[string][]string{},
		clusterID: "kfk-cluster-1",
	}
}

const workerID = "10.0.0.1:8083"

func (f *fakeHerder) leaderOnly() error {
	if f.rebalances > 0 {
		f.rebalances--
		return herder.ErrRebalancing
	}
	if f.notLeader != nil {
		return f.notLeader
	}
	return nil
}

func (f *fakeHerder) Connectors(context.Context) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for n := range f.configs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

func (f *fakeHerder) info(name string) *herder.ConnectorInfo {
	cfg := f.configs[name]
	tasks := []herder.ConnectorTaskID{}
	if f.targets[name] != herder.TargetStopped {
		tasks = append(tasks, herder.ConnectorTaskID{Connector: name, Task: 0})
	}
	return &herder.ConnectorInfo{Name: name, Config: cfg, Tasks: tasks, Type: "sink"}
}

func (f *fakeHerder) ConnectorInfo(ctx context.Context, name string) (*herder.ConnectorInfo, error) {
	if f.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rebalances > 0 {
		f.rebalances--
		return nil, herder.ErrRebalancing
	}
	if _, ok := f.configs[name]; !ok {
		return nil, herder.NotFound("Connector %s not found", name)
	}
	return f.info(name), nil
}

func (f *fakeHerder) ConnectorConfig(_ context.Context, name string) (map[string]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cfg, ok := f.configs[name]
	if !ok {
		return nil, herder.NotFound("Connector %s not found", name)
	}
	return cfg, nil
}

func validate(cfg map[string]string) error {
	class, ok := cfg["connector.class"]
	if !ok {
		return herder.BadRequest("Connector configuration is invalid and contains the following 1 error(s):\n" +
			"Missing required configuration \"connector.class\" which has no default value.\n" +
			"You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`")
	}
	if _, ok := testRegistry.LookupType(class, connect.PluginSink); !ok {
		return &connect.PluginNotFoundError{Name: class, Kind: "Connector"}
	}
	if _, ok := cfg["topics"]; !ok {
		return herder.BadRequest("Connector configuration is invalid and contains the following 2 error(s):\n" +
			"Must configure one of topics or topics.regex\n" +
			"Must configure one of topics or topics.regex\n" +
			"You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`")
	}
	return nil
}

func (f *fakeHerder) PutConnectorConfig(_ context.Context, name string, cfg map[string]string, initial herder.TargetState, allowReplace bool) (*herder.ConnectorInfo, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.leaderOnly(); err != nil {
		return nil, false, err
	}
	if err := validate(cfg); err != nil {
		return nil, false, err
	}
	_, exists := f.configs[name]
	if exists && !allowReplace {
		return nil, false, herder.AlreadyExists("Connector %s already exists", name)
	}
	f.configs[name] = cfg
	if !exists {
		if initial == "" {
			initial = herder.TargetStarted
		}
		f.targets[name] = initial
	}
	return f.info(name), !exists, nil
}

func (f *fakeHerder) PatchConnectorConfig(_ context.Context, name string, patch map[string]*string) (*herder.ConnectorInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.leaderOnly(); err != nil {
		return nil, err
	}
	old, ok := f.configs[name]
	if !ok {
		return nil, herder.NotFound("Connector %s not found", name)
	}
	cfg := map[string]string{}
	for k, v := range old {
		cfg[k] = v
	}
	for k, v := range patch {
		if v == nil {
			delete(cfg, k)
		} else {
			cfg[k] = *v
		}
	}
	if err := validate(cfg); err != nil {
		return nil, err
	}
	f.configs[name] = cfg
	return f.info(name), nil
}

func (f *fakeHerder) DeleteConnector(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.leaderOnly(); err != nil {
		return err
	}
	if _, ok := f.configs[name]; !ok {
		return herder.NotFound("Connector %s not found", name)
	}
	delete(f.configs, name)
	delete(f.targets, name)
	return nil
}

func (f *fakeHerder) status(name string) *herder.ConnectorStateInfo {
	st := herder.StateRunning
	switch f.targets[name] {
	case herder.TargetPaused:
		st = herder.StatePaused
	case herder.TargetStopped:
		st = herder.StateStopped
	}
	// the file sink's connector and task version() (KIP-891), as in plugins.txt
	v := herder.VersionOf("4.0.0")
	info := &herder.ConnectorStateInfo{Name: name, Connector: herder.AbstractState{State: st, WorkerID: workerID, Version: v}, Tasks: []herder.TaskState{}, Type: "sink"}
	if st != herder.StateStopped {
		info.Tasks = append(info.Tasks, herder.TaskState{ID: 0, AbstractState: herder.AbstractState{State: st, WorkerID: workerID, Version: v}})
	}
	return info
}

func (f *fakeHerder) ConnectorStatus(_ context.Context, name string) (*herder.ConnectorStateInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.configs[name]; !ok {
		return nil, herder.NotFound("No status found for connector %s", name)
	}
	return f.status(name), nil
}

func (f *fakeHerder) TaskStatus(_ context.Context, id herder.ConnectorTaskID) (*herder.TaskState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.configs[id.Connector]; !ok || id.Task != 0 || f.targets[id.Connector] == herder.TargetStopped {
		return nil, herder.NotFound("No status found for task %s", id)
	}
	st := f.status(id.Connector).Tasks[0]
	return &st, nil
}

func (f *fakeHerder) TaskConfigs(_ context.Context, name string) ([]herder.TaskInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cfg, ok := f.configs[name]
	if !ok {
		return nil, herder.NotFound("Connector %s not found", name)
	}
	if f.targets[name] == herder.TargetStopped {
		return []herder.TaskInfo{}, nil
	}
	tc := map[string]string{"task.class": "org.apache.kafka.connect.file.FileStreamSinkTask"}
	for k, v := range cfg {
		tc[k] = v
	}
	return []herder.TaskInfo{{ID: herder.ConnectorTaskID{Connector: name, Task: 0}, Config: tc}}, nil
}

func (f *fakeHerder) RestartConnector(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.leaderOnly(); err != nil {
		return err
	}
	if _, ok := f.configs[name]; !ok {
		return herder.NotFound("Unknown connector: %s", name)
	}
	return nil
}

func (f *fakeHerder) RestartConnectorAndTasks(_ context.Context, req herder.RestartRequest) (*herder.ConnectorStateInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.leaderOnly(); err != nil {
		return nil, err
	}
	if _, ok := f.configs[req.Connector]; !ok {
		return nil, herder.NotFound("Unknown connector: %s", req.Connector)
	}
	st := f.status(req.Connector)
	if !req.OnlyFailed {
		st.Connector.State = herder.StateRestarting
		if req.IncludeTasks {
			for i := range st.Tasks {
				st.Tasks[i].State = herder.StateRestarting
			}
		}
	}
	return st, nil
}

func (f *fakeHerder) RestartTask(_ context.Context, id herder.ConnectorTaskID) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.leaderOnly(); err != nil {
		return err
	}
	if _, ok := f.configs[id.Connector]; !ok {
		return herder.NotFound("Unknown connector: %s", id.Connector)
	}
	if id.Task != 0 {
		return herder.NotFound("Unknown task: %s", id)
	}
	return nil
}

func (f *fakeHerder) setTarget(name string, t herder.TargetState) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.configs[name]; !ok {
		return herder.NotFound("Unknown connector %s", name)
	}
	f.targets[name] = t
	return nil
}

func (f *fakeHerder) PauseConnector(_ context.Context, name string) error {
	return f.setTarget(name, herder.TargetPaused)
}
func (f *fakeHerder) ResumeConnector(_ context.Context, name string) error {
	return f.setTarget(name, herder.TargetStarted)
}
func (f *fakeHerder) StopConnector(_ context.Context, name string) error {
	f.mu.Lock()
	err := f.leaderOnly()
	f.mu.Unlock()
	if err != nil {
		return err
	}
	return f.setTarget(name, herder.TargetStopped)
}

func (f *fakeHerder) ConnectorActiveTopics(_ context.Context, name string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.topics[name], nil
}

func (f *fakeHerder) ResetConnectorActiveTopics(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.topics, name)
	return nil
}

func (f *fakeHerder) ConnectorOffsets(_ context.Context, name string) (*herder.ConnectorOffsets, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.configs[name]; !ok {
		return nil, herder.NotFound("Connector %s not found", name)
	}
	return &herder.ConnectorOffsets{Offsets: []herder.ConnectorOffset{{
		Partition: map[string]any{"kafka_topic": "orders", "kafka_partition": 0},
		Offset:    map[string]any{"kafka_offset": 42},
	}}}, nil
}

func (f *fakeHerder) offsetsAllowed(name string) error {
	if _, ok := f.configs[name]; !ok {
		return herder.NotFound("Connector %s not found", name)
	}
	if f.targets[name] != herder.TargetStopped {
		return herder.BadRequest("Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/%s/stop' endpoint", name)
	}
	return nil
}

func (f *fakeHerder) AlterConnectorOffsets(_ context.Context, name string, _ herder.ConnectorOffsets) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.leaderOnly(); err != nil {
		return "", err
	}
	if err := f.offsetsAllowed(name); err != nil {
		return "", err
	}
	return "The Connect framework-managed offsets for this connector have been altered successfully. However, if this connector manages offsets externally, they will need to be manually altered in the system that the connector uses.", nil
}

func (f *fakeHerder) ResetConnectorOffsets(_ context.Context, name string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.leaderOnly(); err != nil {
		return "", err
	}
	if err := f.offsetsAllowed(name); err != nil {
		return "", err
	}
	return "The Connect framework-managed offsets for this connector have been reset successfully. However, if this connector manages offsets externally, they will need to be manually reset in the system that the connector uses.", nil
}

func (f *fakeHerder) ValidateConnectorConfig(_ context.Context, cfg map[string]string) (*herder.ConfigInfos, error) {
	p, ok := testRegistry.Lookup(cfg["connector.class"])
	if !ok {
		return nil, &connect.PluginNotFoundError{Name: cfg["connector.class"], Kind: "Connector"}
	}
	def := p.New().(connect.Configurable).ConfigDef()
	infos := &herder.ConfigInfos{Name: p.Class, Groups: []string{}}
	for _, cv := range def.Validate(cfg) {
		k, _ := def.Key(cv.Name)
		var val *string
		if s, ok := cv.Value.(string); ok {
			val = &s
		}
		errs := cv.Errors
		if errs == nil {
			errs = []string{}
		}
		infos.ErrorCount += len(cv.Errors)
		infos.Configs = append(infos.Configs, herder.ConfigInfo{
			Definition: ConfigKeyInfo(k),
			Value:      herder.ConfigValueInfo{Name: cv.Name, Value: val, RecommendedValues: []string{}, Errors: errs, Visible: cv.Visible},
		})
	}
	return infos, nil
}

func (f *fakeHerder) Healthy(context.Context) error {
	if f.notReady {
		return herder.ErrNotReady
	}
	return nil
}

func (f *fakeHerder) KafkaClusterID() string { return f.clusterID }

// distributedFake adds the distributed-only optional interfaces.
type distributedFake struct{ *fakeHerder }

func (d distributedFake) PutTaskConfigs(_ context.Context, name string, configs []map[string]string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.leaderOnly(); err != nil {
		return err
	}
	if _, ok := d.configs[name]; !ok {
		return herder.NotFound("Connector %s not found", name)
	}
	d.taskPuts = append(d.taskPuts, configs)
	return nil
}

func (d distributedFake) SessionKey() ([]byte, []string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.sessionKey, []string{"HmacSHA256"}, d.keyNeeded
}

func (d distributedFake) SetClusterLoggerLevel(_ context.Context, ns, level string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.loggerSets = append(d.loggerSets, ns+"="+level)
	return nil
}
