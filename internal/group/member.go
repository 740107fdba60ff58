package group

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/connectd/connectd/internal/backoff"
)

// Handler is the herder side of membership. All calls come from the member's goroutine, one at a time, and
// none may wait for herder work: the member heartbeats on the same goroutine, so a handler that blocked on the
// herder (which forwards requests and writes to Kafka) would get the worker evicted. The herder applies
// assignments and revocations on its own goroutine, as the JVM's DistributedHerder does with what its
// WorkerCoordinator hands over.
type Handler interface {
	// State is this worker's advertised REST URL and the next config-topic offset it has read (-1 if none).
	State() (url string, configOffset int64)
	// LeaderSnapshot is called on the leader: the config snapshot read to at least maxOffset. ok=false when the
	// leader cannot catch up (members then get CONFIG_MISMATCH and rejoin).
	LeaderSnapshot(maxOffset int64) (snap ConfigSnapshot, ok bool)
	// CatchUp reads the config topic to at least offset; false if it could not within the sync timeout.
	CatchUp(offset int64) bool
	// Revoke hands over work to stop and returns at once; the returned channel is closed once the work is
	// stopped. The member keeps heartbeating meanwhile and rejoins only after it closed (revoked work must be
	// stopped before anyone else can be given it). lost says that the membership itself was lost: nothing may
	// be started or written for the old generation any more.
	Revoke(c ConnectorsAndTasks, lost bool) <-chan struct{}
	// Assigned hands over the outcome of every successful rebalance and returns at once: the raw assignment
	// and the member's complete assignment after it (previous + assigned - revoked; in eager mode the assigned
	// set). The herder applies it only while Member.IsCurrent(generation) holds.
	Assigned(a *Assignment, full ConnectorsAndTasks, generation int32, isLeader bool)
}

// Config configures a Member. Durations are the JVM worker keys of the same meaning.
type Config struct {
	GroupID           string
	SessionTimeout    time.Duration // session.timeout.ms
	RebalanceTimeout  time.Duration // rebalance.timeout.ms
	HeartbeatInterval time.Duration // heartbeat.interval.ms
	MaxDelay          time.Duration // scheduled.rebalance.max.delay.ms
	UnsyncBackoff     time.Duration // worker.unsync.backoff.ms
	Protocol          string        // connect.protocol: eager, compatible, sessioned
	// PeerProbeInterval is how often every member probes the other members' REST listeners, to remove dead
	// members before their session times out (probe.go); 0 turns it off.
	PeerProbeInterval time.Duration
	Logger            *slog.Logger
}

// Member is one worker's membership in the Connect group.
type Member struct {
	cfg      Config
	client   *kgo.Client
	h        Handler
	versions []int16
	log      *slog.Logger

	memberID   string
	generation int32
	current    ConnectorsAndTasks // full current assignment
	rejoin     chan struct{}

	leaderAssignor      *IncrementalAssignor
	peers               map[string]string // member id -> REST host:port of the members this one probes
	prober              peerProber
	lastCompletedGen    int32
	mu                  sync.Mutex
	leaderID, leaderURL string
	leaderChanged       chan struct{} // closed (and replaced) whenever the leader's id or URL is set
	protocolVersion     int16
	isLeader            bool
}

// NewMember prepares a member on client, which sends the group's requests to the group's coordinator (a
// JoinGroup waits up to the rebalance timeout on a connection of its own).
func NewMember(client *kgo.Client, cfg Config, h Handler) (*Member, error) {
	vs, err := ProtocolsFor(cfg.Protocol)
	if err != nil {
		return nil, err
	}
	if cfg.GroupID == "" {
		return nil, errors.New("group: group.id is required")
	}
	if cfg.SessionTimeout == 0 {
		cfg.SessionTimeout = 10 * time.Second
	}
	if cfg.RebalanceTimeout == 0 {
		cfg.RebalanceTimeout = 60 * time.Second
	}
	if cfg.HeartbeatInterval == 0 {
		cfg.HeartbeatInterval = time.Second
	}
	if cfg.UnsyncBackoff == 0 {
		cfg.UnsyncBackoff = 5 * time.Second
	}
	lg := cfg.Logger
	if lg == nil {
		lg = slog.Default()
	}
	return &Member{cfg: cfg, client: client, h: h, versions: vs, log: lg.With("group", cfg.GroupID),
		rejoin: make(chan struct{}, 1), leaderChanged: make(chan struct{}), leaderAssignor: NewIncrementalAssignor(cfg.MaxDelay), lastCompletedGen: -1}, nil
}

// RequestRejoin asks for a rebalance (after config changes that alter the set of connectors or tasks).
func (m *Member) RequestRejoin() {
	select {
	case m.rejoin <- struct{}{}:
	default:
	}
}

// Leader returns the current leader's member id and URL, and whether this member is the leader.
func (m *Member) Leader() (id, url string, self bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.leaderID, m.leaderURL, m.isLeader
}

// LeaderChanged returns a channel that is closed the next time the leader is set (every completed SyncGroup):
// callers waiting for a leader read Leader, and if it is unknown wait on the channel they got before.
func (m *Member) LeaderChanged() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.leaderChanged
}

// MemberID is this member's id in the current generation.
func (m *Member) MemberID() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.memberID
}

// IsCurrent says whether this member still holds the given generation: false once it learned of a newer
// one or lost its membership. Work of an assignment is started only while its generation is current.
func (m *Member) IsCurrent(generation int32) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.memberID != "" && m.generation == generation && generation >= 0
}

// ProtocolVersion is the sub-protocol the group settled on.
func (m *Member) ProtocolVersion() int16 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.protocolVersion
}

// Run keeps the member in the group until ctx ends, then leaves the group. Work is revoked through the handler
// whenever membership is lost.
func (m *Member) Run(ctx context.Context) error {
	defer m.leave(ctx)
	retry := backoff.Backoff{Initial: 100 * time.Millisecond, Max: 3200 * time.Millisecond}
	for ctx.Err() == nil {
		delay, revoked, err := m.joinAndSync(ctx)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			if errors.Is(err, kerr.RebalanceInProgress) {
				// another rebalance started while this one synced: join it at once, as the JVM's coordinator does
				m.log.Debug("rejoining the group", "reason", "the coordinator started another rebalance")
				continue
			}
			m.log.Info("rebalance failed, retrying", "err", err)
			if retry.Wait(ctx) != nil {
				break
			}
			continue
		}
		retry.Reset()
		if reason := m.heartbeatUntilRejoin(ctx, delay, revoked); reason != "" {
			m.log.Debug("rejoining the group", "reason", reason, "generation", m.generationOr())
		}
	}
	return nil
}

// resetGeneration forgets the membership and has everything local stopped before the member joins again
// (the coordinator has already handed this member's work to others).
func (m *Member) resetGeneration(ctx context.Context) {
	m.mu.Lock()
	if m.memberID != "" {
		m.log.Warn("membership lost: stopping all local work before rejoining", "generation", m.generation)
	}
	m.memberID = ""
	m.generation = -1
	m.isLeader = false
	m.mu.Unlock()
	if !m.current.IsEmpty() {
		done := m.h.Revoke(m.current, true)
		m.current = ConnectorsAndTasks{}
		select {
		case <-done:
		case <-ctx.Done():
		}
	}
}

// awaitRevocation waits until the herder stopped revoked work, heartbeating meanwhile so that a slow stop
// (a task's final commit) does not cost the membership. It returns an error when the membership was lost.
func (m *Member) awaitRevocation(ctx context.Context, done <-chan struct{}) error {
	tick := time.NewTicker(m.cfg.HeartbeatInterval)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			// a rebalance in progress is fine: the coordinator waits for our JoinGroup up to the rebalance timeout
			if err := m.heartbeat(ctx); err != nil && lostMembership(err) {
				m.resetGeneration(ctx)
				return err
			}
		}
	}
}

// lostMembership says whether a coordinator error means this member is no longer in the group.
func lostMembership(err error) bool {
	return errors.Is(err, kerr.UnknownMemberID) || errors.Is(err, kerr.IllegalGeneration) ||
		errors.Is(err, kerr.FencedInstanceID)
}

// joinAndSync does one JoinGroup + SyncGroup round and hands the assignment over; it returns the rejoin delay
// and, when work was revoked, the channel that closes once it is stopped (the next join waits for it).
func (m *Member) joinAndSync(ctx context.Context) (time.Duration, <-chan struct{}, error) {
	if len(m.versions) == 1 && !m.current.IsEmpty() { // eager: give everything back before joining
		done := m.h.Revoke(m.current, false)
		m.current = ConnectorsAndTasks{}
		if err := m.awaitRevocation(ctx, done); err != nil {
			return 0, nil, err
		}
	}
	url, offset := m.h.State()
	req := kmsg.NewPtrJoinGroupRequest()
	req.Group, req.MemberID, req.ProtocolType = m.cfg.GroupID, m.MemberID(), ProtocolType
	req.SessionTimeoutMillis = int32(m.cfg.SessionTimeout / time.Millisecond)
	req.RebalanceTimeoutMillis = int32(m.cfg.RebalanceTimeout / time.Millisecond)
	for _, v := range m.versions {
		ws := WorkerState{Version: v, URL: url, Offset: offset}
		if v >= V1 {
			cur := &Assignment{Version: v, Connectors: m.current.Connectors, Tasks: m.current.Tasks, Offset: offset,
				Leader: m.leaderIDOr(), LeaderURL: m.leaderURLOr()}
			ws.Assignment = cur
		}
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name, p.Metadata = ProtocolName(v), EncodeMetadata(ws)
		req.Protocols = append(req.Protocols, p)
	}
	stopProbe := m.probeDuringRebalance(ctx)
	defer stopProbe()
	// the client finds the coordinator, and finds it again and retries when it moved
	resp, err := req.RequestWith(ctx, m.client)
	if err != nil {
		return 0, nil, err
	}
	switch err := kerr.ErrorForCode(resp.ErrorCode); {
	case err == nil:
	case errors.Is(err, kerr.MemberIDRequired):
		m.mu.Lock()
		m.memberID = resp.MemberID
		m.mu.Unlock()
		return m.joinAndSync(ctx)
	case errors.Is(err, kerr.UnknownMemberID), errors.Is(err, kerr.IllegalGeneration):
		m.resetGeneration(ctx)
		return 0, nil, err
	default:
		return 0, nil, err
	}
	var protocol string
	if resp.Protocol != nil {
		protocol = *resp.Protocol
	}
	version, err := ProtocolVersion(protocol)
	if err != nil {
		return 0, nil, err
	}
	m.log.Debug("joined the group", "generation", resp.Generation, "member", resp.MemberID, "leader", resp.LeaderID,
		"members", len(resp.Members), "protocol", protocol)
	m.mu.Lock()
	m.memberID = resp.MemberID
	m.generation = resp.Generation
	m.protocolVersion = version
	m.isLeader = resp.LeaderID == resp.MemberID
	isLeader := m.isLeader
	gen := resp.Generation
	m.mu.Unlock()

	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group, sync.Generation, sync.MemberID = m.cfg.GroupID, gen, resp.MemberID
	protocolType := ProtocolType
	sync.ProtocolType, sync.Protocol = &protocolType, &protocol
	if isLeader {
		assignments, err := m.performAssignment(resp, version)
		if err != nil {
			return 0, nil, err
		}
		for id, b := range assignments {
			a := kmsg.NewSyncGroupRequestGroupAssignment()
			a.MemberID, a.MemberAssignment = id, b
			sync.GroupAssignment = append(sync.GroupAssignment, a)
		}
	}
	sresp, err := sync.RequestWith(ctx, m.client)
	if err != nil {
		return 0, nil, err
	}
	switch err := kerr.ErrorForCode(sresp.ErrorCode); {
	case err == nil:
	case errors.Is(err, kerr.UnknownMemberID), errors.Is(err, kerr.IllegalGeneration):
		m.resetGeneration(ctx)
		return 0, nil, err
	default:
		return 0, nil, err
	}
	a, err := DecodeAssignment(sresp.MemberAssignment)
	if err != nil {
		return 0, nil, err
	}
	m.log.Debug("synced with the group", "generation", gen, "connectors", len(a.Connectors), "tasks", len(a.Tasks),
		"revoked_connectors", len(a.RevokedConnectors), "revoked_tasks", len(a.RevokedTasks), "delay_ms", a.Delay)
	m.mu.Lock()
	m.leaderID, m.leaderURL = a.Leader, a.LeaderURL
	close(m.leaderChanged)
	m.leaderChanged = make(chan struct{})
	m.mu.Unlock()
	if a.Error == ConfigMismatch {
		// the leader could not reach the newest config: catch up ourselves and rejoin
		m.h.CatchUp(a.Offset)
		return 0, nil, fmt.Errorf("group: config mismatch at offset %d", a.Offset)
	}
	m.lastCompletedGen = gen // every member tracks it (the JVM's lastCompletedGenerationId), leader or not
	if !m.h.CatchUp(a.Offset) {
		m.log.Warn("could not read the config topic to the assignment's offset; leaving the group", "offset", a.Offset)
		m.leave(ctx)
		m.resetGeneration(ctx)
		_ = backoff.Sleep(ctx, m.cfg.UnsyncBackoff)
		return 0, nil, errors.New("group: config sync timeout")
	}
	var full ConnectorsAndTasks
	var revokedDone <-chan struct{}
	if a.Version == V0 {
		full = ConnectorsAndTasks{Connectors: a.Connectors, Tasks: a.Tasks}
	} else {
		revoked := ConnectorsAndTasks{Connectors: a.RevokedConnectors, Tasks: a.RevokedTasks}
		if !revoked.IsEmpty() {
			revokedDone = m.h.Revoke(revoked, false)
		}
		cur := fromPublic(m.current)
		cur.removeAll(fromPublic(revoked))
		cur.addAll(fromPublic(ConnectorsAndTasks{Connectors: a.Connectors, Tasks: a.Tasks}))
		full = cur.public()
	}
	m.current = full
	m.h.Assigned(a, full, gen, isLeader)
	if !isLeader { // after the handover: the work starts meanwhile
		m.peers = m.followerTargets(ctx, gen, a.Leader, a.LeaderURL, resp.MemberID)
	}
	if revokedDone != nil {
		m.RequestRejoin() // the JVM rejoins once revoked work is stopped, so that it can be reassigned
	}
	return time.Duration(a.Delay) * time.Millisecond, revokedDone, nil
}

func (m *Member) leaderIDOr() string  { id, _, _ := m.Leader(); return id }
func (m *Member) generationOr() int32 { m.mu.Lock(); defer m.mu.Unlock(); return m.generation }
func (m *Member) leaderURLOr() string { _, u, _ := m.Leader(); return u }

func (m *Member) performAssignment(resp *kmsg.JoinGroupResponse, version int16) (map[string][]byte, error) {
	states := map[string]*WorkerState{}
	maxOffset := int64(-1)
	var ids []string
	for _, mem := range resp.Members {
		ws, err := DecodeMetadata(mem.ProtocolMetadata)
		if err != nil {
			return nil, fmt.Errorf("group: member %s metadata: %w", mem.MemberID, err)
		}
		states[mem.MemberID] = ws
		ids = append(ids, mem.MemberID)
		if ws.Offset > maxOffset {
			maxOffset = ws.Offset
		}
	}
	leaderURL := states[resp.LeaderID].URL
	m.peers = probeTargets(states, resp.LeaderID)
	snap, ok := m.h.LeaderSnapshot(maxOffset)
	if !ok {
		res := &Result{Assignments: map[string]MemberAssignment{}}
		for _, id := range ids {
			res.Assignments[id] = MemberAssignment{}
		}
		return res.Serialize(version, ConfigMismatch, resp.LeaderID, leaderURL, maxOffset), nil
	}
	off := maxOffset
	if snap.Offset > off {
		off = snap.Offset
	}
	var res *Result
	if version == V0 {
		res = EagerAssign(snap, ids)
	} else {
		cur := map[string]ConnectorsAndTasks{}
		for id, ws := range states {
			if ws.Assignment != nil {
				cur[id] = ConnectorsAndTasks{Connectors: ws.Assignment.Connectors, Tasks: ws.Assignment.Tasks}
			} else {
				cur[id] = ConnectorsAndTasks{}
			}
		}
		res = m.leaderAssignor.Assign(snap, m.lastCompletedGen, resp.Generation, cur)
	}
	return res.Serialize(version, NoError, resp.LeaderID, leaderURL, off), nil
}

// heartbeatUntilRejoin heartbeats until a rebalance is needed: the coordinator says so, a rejoin is requested,
// the scheduled delay passes, or ctx ends. While revoked work is still being stopped (revoked not closed) it
// keeps heartbeating and rejoins only once it is stopped. It returns why it rejoins ("" when ctx ended or the
// membership was lost).
func (m *Member) heartbeatUntilRejoin(ctx context.Context, delay time.Duration, revoked <-chan struct{}) string {
	tick := time.NewTicker(m.cfg.HeartbeatInterval)
	defer tick.Stop()
	var delayC <-chan time.Time
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		delayC = t.C
	}
	var probeC <-chan time.Time
	var probe *time.Timer
	if m.cfg.PeerProbeInterval > 0 && len(m.peers) > 0 {
		probe = time.NewTimer(untilProbe(time.Now(), m.cfg.PeerProbeInterval))
		defer probe.Stop()
		probeC = probe.C
		m.prober.timeout = min(m.cfg.PeerProbeInterval/2, time.Second)
	}
	rejoin := ""              // why, once a rebalance is needed
	var awaitLeader time.Time // while set, the scheduled delay passed and the leader's rebalance is awaited
	for {
		if rejoin != "" && revoked == nil {
			return rejoin
		}
		select {
		case <-probeC:
			dead := m.prober.probe(m.peers)
			// a member refused once is probed again soon rather than a whole interval later
			next := m.cfg.PeerProbeInterval
			if ids := m.prober.suspects(); len(ids) > 0 {
				m.log.Debug("REST listener refused a probe", "members", ids)
				next = max(next/4, 50*time.Millisecond)
			}
			probe.Reset(untilProbe(time.Now(), next))
			if len(dead) > 0 {
				m.log.Warn("removing members whose REST listener refuses connections (their process is gone)", "members", dead)
				if err := m.removeMembers(ctx, dead); err != nil {
					m.log.Info("removing members failed", "err", err)
				}
				for _, id := range dead {
					delete(m.peers, id)
				}
				rejoin = "members removed"
			}
		case <-ctx.Done():
			return ""
		case <-revoked:
			revoked = nil
		case <-m.rejoin:
			rejoin = "rejoin requested"
		case <-delayC:
			if _, _, self := m.Leader(); self || m.cfg.HeartbeatInterval <= leaderPoll {
				rejoin = "scheduled rebalance delay passed"
				break
			}
			// The leader's JoinGroup starts the rebalance once its own delay passes. A member joining before
			// it finds the group stable, gets its assignment back, and hears of the leader's rebalance only
			// in a later heartbeat's answer; so ask the coordinator often until it reports the rebalance,
			// and join then (or a heartbeat interval on, as when the leader is not connectd).
			awaitLeader = time.Now().Add(m.cfg.HeartbeatInterval)
			tick.Reset(leaderPoll)
		case <-tick.C:
			err := m.heartbeat(ctx)
			switch {
			case err == nil:
				if !awaitLeader.IsZero() && !time.Now().Before(awaitLeader) {
					rejoin = "scheduled rebalance delay passed"
				}
			case lostMembership(err):
				m.log.Info("heartbeat refused", "err", err)
				m.resetGeneration(ctx)
				return ""
			case errors.Is(err, kerr.RebalanceInProgress):
				rejoin = "the coordinator started a rebalance"
			default:
				m.log.Info("heartbeat failed", "err", err)
				rejoin = "heartbeat failed"
			}
		}
	}
}

// leaderPoll is how often a member heartbeats while it waits for the leader to start a scheduled rebalance.
const leaderPoll = 100 * time.Millisecond

// heartbeat sends one heartbeat, waiting for it at most a session timeout (after that the membership is
// gone anyway).
func (m *Member) heartbeat(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.SessionTimeout)
	defer cancel()
	req := kmsg.NewPtrHeartbeatRequest()
	m.mu.Lock()
	req.Group, req.Generation, req.MemberID = m.cfg.GroupID, m.generation, m.memberID
	m.mu.Unlock()
	resp, err := req.RequestWith(ctx, m.client)
	if err != nil {
		return err
	}
	return kerr.ErrorForCode(resp.ErrorCode)
}

// leave leaves the group, waiting for the coordinator at most a session timeout; ctx may have ended
// already (the member stops).
func (m *Member) leave(ctx context.Context) {
	id := m.MemberID()
	if id == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.cfg.SessionTimeout)
	defer cancel()
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group, req.MemberID = m.cfg.GroupID, id
	mem := kmsg.NewLeaveGroupRequestMember()
	mem.MemberID = id
	req.Members = append(req.Members, mem)
	_, _ = req.RequestWith(ctx, m.client)
	m.mu.Lock()
	m.memberID = ""
	m.mu.Unlock()
}
