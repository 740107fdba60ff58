package cdcstream

// Case is a fixed stream with forced commit boundaries (Phases, as in Trial), run before the random ones.
type Case struct {
	Name string
	Trial
}

func knownRow(lsn int64, name string) *Row {
	return &Row{ID: "k", Name: name, Qty: lsn, UpdatedAt: 1_700_000_000_000 + lsn}
}

// KnownCases are the hand-written streams every run starts with: the lost delete version (a stale
// redelivery after delete + tombstone, in the next commit and in the same one), stale events across
// commits, delete + re-create, a replayed window whose delete and tombstone are stale (in one commit and split
// by one), duplicates; with bare, also tombstones without their delete.
func KnownCases(bare bool) []Case {
	c110, u115, c130 := knownRow(110, "create"), knownRow(115, "update"), knownRow(130, "re-create")
	e := func(op Op, lsn int64, r *Row, how string) Event {
		return Event{Key: "k", Op: op, LSN: lsn, Row: r, How: how}
	}
	tomb := Event{Key: "k", Op: Tombstone}
	cases := []Case{
		{"stale create in the commit after delete+tombstone", Trial{
			Events: []Event{e(Create, 110, c110, ""), e(Update, 115, u115, ""), e(Delete, 120, u115, ""), tomb, e(Create, 110, c110, "stale redelivery")},
			Phases: []int{0, 0, 0, 0, 1}}},
		{"stale create after delete+tombstone in one commit", Trial{
			Events: []Event{e(Create, 110, c110, ""), e(Update, 115, u115, ""), e(Delete, 120, u115, ""), tomb, e(Create, 110, c110, "stale redelivery")},
			Phases: []int{0, 0, 0, 0, 0}}},
		{"stale update in the commit after a delete", Trial{
			Events: []Event{e(Create, 110, c110, ""), e(Update, 115, u115, ""), e(Delete, 120, u115, ""), e(Update, 115, u115, "stale redelivery")},
			Phases: []int{0, 1, 2, 3}}},
		{"stale create in the commit after an update", Trial{
			Events: []Event{e(Create, 110, c110, ""), e(Update, 115, u115, ""), e(Create, 110, c110, "stale redelivery")},
			Phases: []int{0, 1, 2}}},
		{"re-create, then a stale delete and a stale create", Trial{
			Events: []Event{e(Create, 110, c110, ""), e(Delete, 120, c110, ""), tomb, e(Create, 130, c130, "re-create"),
				e(Delete, 120, c110, "stale redelivery"), e(Create, 110, c110, "stale redelivery")},
			Phases: []int{0, 0, 0, 1, 2, 2}}},
		{"replayed delete, tombstone and re-create after the re-create committed", Trial{
			Events: []Event{e(Create, 110, c110, ""), e(Delete, 120, c110, ""), tomb, e(Create, 130, c130, "re-create"),
				e(Delete, 120, c110, "replay"), tomb, e(Create, 130, c130, "replay")},
			Phases: []int{0, 0, 0, 1, 2, 2, 2}}},
		{"a stale delete and its tombstone split by a commit", Trial{
			Events: []Event{e(Create, 110, c110, ""), e(Delete, 120, c110, ""), tomb, e(Create, 130, c130, "re-create"),
				e(Delete, 120, c110, "stale redelivery"), tomb},
			Phases: []int{0, 0, 0, 1, 2, 3}}},
		{"exact duplicates across commits", Trial{
			Events: []Event{e(Create, 110, c110, ""), e(Create, 110, c110, "duplicate"), e(Update, 115, u115, ""), e(Update, 115, u115, "duplicate")},
			Phases: []int{0, 1, 1, 2}}},
	}
	if bare {
		cases = append(cases,
			Case{"bare tombstone, then a stale update in the next commit", Trial{
				Events: []Event{e(Create, 110, c110, ""), e(Update, 115, u115, ""), {Key: "k", Op: Tombstone, How: "bare tombstone"},
					e(Update, 115, u115, "stale redelivery")},
				Phases: []int{0, 1, 2, 3}}},
			Case{"bare tombstone after a stale create in its commit (the key's version is the live row's)", Trial{
				Events: []Event{e(Create, 110, c110, ""), e(Update, 115, u115, ""), e(Create, 110, c110, "stale redelivery"),
					{Key: "k", Op: Tombstone, How: "bare tombstone"}},
				Phases: []int{0, 1, 2, 2}}})
	}
	return cases
}
