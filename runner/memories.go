package runner

import (
	"context"

	"reasonix/runner/store"
)

// MemoryFilter selects memories for Memories.
type MemoryFilter struct {
	// Scope is "workspace:<name>" or "user:<principal>"; "" is every
	// scope the principal may see.
	Scope string
	// All includes forgotten memories.
	All bool
	// Limit bounds the list (newest first); 0 is 200.
	Limit int
}

// memoriesMax bounds one listing.
const memoriesMax = 1000

// Memories lists the memories matching f that p may see (MaySeeMemory),
// newest first. A malformed scope or limit is ErrInvalid.
func (s *Service) Memories(ctx context.Context, p Principal, f MemoryFilter) ([]store.Memory, error) {
	var sf store.MemoryFilter
	if f.Scope != "" {
		sc, err := store.ParseMemoryScope(f.Scope)
		if err != nil {
			return nil, invalidf("scope %q is not workspace:<name> or user:<principal>", f.Scope)
		}
		sf.Scopes = []store.MemoryScope{sc}
	}
	switch {
	case f.Limit < 0 || f.Limit > memoriesMax:
		return nil, invalidf("limit must be between 1 and %d", memoriesMax)
	case f.Limit == 0:
		f.Limit = 200
	}
	sf.All = f.All
	list, _, err := s.st.Memories(ctx, sf)
	if err != nil {
		return nil, mapStoreErr(err, "the memories")
	}
	out := make([]store.Memory, 0, min(len(list), f.Limit))
	for _, m := range list {
		if len(out) == f.Limit {
			break
		}
		if p.MaySeeMemory(m) {
			out = append(out, m)
		}
	}
	return out, nil
}

// Memory returns memory id if p may see it; one p may not see is
// ErrNotFound, as if it did not exist.
func (s *Service) Memory(ctx context.Context, p Principal, id string) (store.Memory, error) {
	m, err := s.st.Memory(ctx, id)
	if err != nil {
		return store.Memory{}, mapStoreErr(err, "memory "+id)
	}
	if !p.MaySeeMemory(m) {
		return store.Memory{}, failf(ErrNotFound, "memory %s not found", id)
	}
	return m, nil
}

// ForgetMemory forgets memory id for p (MayForgetMemory); every node's
// recall drops it from the next turn on. Forgetting a forgotten memory
// returns it unchanged.
func (s *Service) ForgetMemory(ctx context.Context, p Principal, id string) (store.Memory, error) {
	m, err := s.st.Memory(ctx, id)
	if err != nil {
		return store.Memory{}, mapStoreErr(err, "memory "+id)
	}
	if err := p.MayForgetMemory(m); err != nil {
		return store.Memory{}, err
	}
	m, err = s.st.ForgetMemory(ctx, id, p.ID)
	if err != nil {
		return store.Memory{}, mapStoreErr(err, "memory "+id)
	}
	return m, nil
}
