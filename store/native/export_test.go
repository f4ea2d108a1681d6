package native

import (
	"time"

	bolt "go.etcd.io/bbolt"
)

// Entries counts what the store holds of a project: in memory (records,
// index entries, runs, keys, drafts, deliveries, events, audit entries)
// and in the database (keys under the project).
func (s *Store) Entries(project string) (mem, disk int) {
	_ = s.Sync()
	s.mu.RLock()
	if p := s.projects[project]; p != nil {
		mem = len(p.qs) + p.all.Len() + p.deadlines.Len() + p.escal.Len() + p.exp.Len() + p.ttl.Len() +
			len(p.runs) + p.runTTL.Len() + len(p.idem) + p.idemTTL.Len() + len(p.drafts) + p.draftTTL.Len() +
			len(p.dlv) + p.outbox.Len() + len(p.liveEvents()) + len(p.liveAudit()) + len(p.auByQ)
		for _, t := range p.byStatus {
			mem += t.Len()
		}
	}
	s.mu.RUnlock()
	if s.db != nil {
		_ = s.db.View(func(tx *bolt.Tx) error {
			for _, b := range buckets {
				if string(b) == "proj" {
					continue
				}
				_ = tx.Bucket(b).ForEach(func(k, _ []byte) error {
					if p, _ := splitKey(k); p == project {
						disk++
					}
					return nil
				})
			}
			return nil
		})
	}
	return mem, disk
}

// Hold takes the store's lock, as a long operation would, until release.
func (s *Store) Hold() (release func()) {
	s.mu.Lock()
	return s.mu.Unlock
}

// Queued is how many changes wait for a commit to start (the one under
// way not counted).
func (s *Store) Queued() int {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	return len(s.queue)
}

// WriteStats is what the database wrote so far: commits, pages written
// and time spent writing them (sync included).
func (s *Store) WriteStats() (commits, pages int64, took time.Duration) {
	st := s.db.Stats().TxStats
	return int64(s.db.Stats().TxN), st.GetWrite(), st.GetWriteTime()
}

// InMemory counts the questions whose doc and the runs whose record are
// held in memory (the rest are read from the file), once every change is
// committed and released.
func (s *Store) InMemory() (docs, runs int) {
	_ = s.Sync()
	_ = s.Sync() // the second change releases what the first committed
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, p := range s.projects {
		for _, r := range p.qs {
			if r.doc != "" {
				docs++
			}
		}
		for _, r := range p.runs {
			if r != nil {
				runs++
			}
		}
	}
	return docs, runs
}

// WithHandBack sets how often the store gives back the mapped pages of its
// data file.
func WithHandBack(o Options, every time.Duration) Options {
	o.handBack = every
	return o
}

// WithHandBackCap sets how much of the data file may be mapped in since the
// last hand-back before the store gives it back without waiting for the
// period.
func WithHandBackCap(o Options, limit int64) Options {
	o.handBackCap = limit
	return o
}

// HandBack gives back the mapped pages of the data file now.
func (s *Store) HandBack() { unmapLoaded(s.db) }
