package store

import (
	"context"
	"sort"
)

func (s *Store) register(ctx context.Context, project string) error {
	s.projMu.Lock()
	ok := s.known[project]
	s.projMu.Unlock()
	if ok {
		return nil
	}
	if err := s.rdb.SAdd(ctx, s.prefix+":projects", project).Err(); err != nil {
		return err
	}
	s.projMu.Lock()
	s.known[project] = true
	s.projMu.Unlock()
	return nil
}

// projectList returns the projects known to this replica; refresh reads
// them from Redis first (another replica may have registered one).
func (s *Store) projectList(ctx context.Context, refresh bool) ([]string, error) {
	s.projMu.Lock()
	loaded := s.projLoaded
	s.projMu.Unlock()
	if refresh || !loaded {
		ps, err := s.rdb.SMembers(ctx, s.prefix+":projects").Result()
		if err != nil {
			return nil, s.wrap(err)
		}
		s.projMu.Lock()
		for _, p := range ps {
			s.known[p] = true
		}
		s.projLoaded = true
		s.projMu.Unlock()
	}
	s.projMu.Lock()
	defer s.projMu.Unlock()
	out := make([]string, 0, len(s.known))
	for p := range s.known {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}

// Projects implements lifecycle.Store.
func (s *Store) Projects(ctx context.Context) ([]string, error) {
	ps, err := s.rdb.SMembers(ctx, s.prefix+":projects").Result()
	sort.Strings(ps)
	return ps, s.wrap(err)
}
