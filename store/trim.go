package store

import (
	"context"
	"time"
)

// trimLimit bounds the final records one Trim drops per project, and
// trimScan the entries of the all index it re-checks per project: a
// sweep stays short however much has piled up, and the next one goes on.
// The re-check is a backstop (records that vanished without the sweeper,
// an earlier release's): at 4 sweeps a second, a replica goes through
// 100,000 entries in about 4 minutes for ~100 EXISTS per project a sweep.
const (
	trimLimit = 2000
	trimScan  = 100
)

// Trim drops, in every project, what has outlived retention at now: final
// records whose retention has passed and every index entry naming them,
// index entries whose record is gone, events older than Retention and
// audit entries older than AuditRetention (the streams themselves once
// empty), a project's sequence once it has no record left. Together with
// the Redis TTLs the scripts set, nothing of a project outlives its last
// question by more than retention (docs/operations.md "Redis keys and lifetimes").
// The router's sweeper calls it on every replica; concurrent calls are
// safe. It returns the number of records dropped.
func (s *Store) Trim(ctx context.Context, now time.Time) (int, error) {
	projects, err := s.Projects(ctx)
	if err != nil {
		return 0, err
	}
	emin, amin := minID(now.Add(-s.retention)), minID(now.Add(-s.auditKeep))
	total := 0
	for _, p := range projects {
		s.trimMu.Lock()
		cursor := s.trimCursor[p]
		s.trimMu.Unlock()
		res, err := trimScript.Run(ctx, s.rdb, []string{s.base(p) + "exp"}, s.base(p), ms(now), trimLimit,
			emin, amin, cursor, trimScan).Int64Slice()
		if err != nil {
			return total, s.wrap(err)
		}
		total += int(res[0])
		s.trimMu.Lock()
		s.trimCursor[p] = res[1]
		s.trimMu.Unlock()
	}
	return total, nil
}
