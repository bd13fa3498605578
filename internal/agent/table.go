package agent

import (
	"slices"
	"sync"
	"time"
)

// idTable holds the agent's background processes, sessions or terminals
// by id. The zero value is ready. Adding is each kind's own (its id and
// replacement rules differ), under mu.
type idTable[T tableEntry] struct {
	mu   sync.Mutex
	byID map[string]T
}

// tableEntry is what an idTable holds: its id, and when it began (lists
// are in that order).
type tableEntry interface {
	comparable
	tableKey() (id string, began time.Time)
}

func (t *idTable[T]) get(id string) (T, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.byID[id]
	return e, ok
}

func (t *idTable[T]) list() []T {
	t.mu.Lock()
	defer t.mu.Unlock()
	list := make([]T, 0, len(t.byID))
	for _, e := range t.byID {
		list = append(list, e)
	}
	slices.SortFunc(list, func(a, b T) int {
		_, ta := a.tableKey()
		_, tb := b.tableKey()
		return ta.Compare(tb)
	})
	return list
}

// remove forgets e, unless its id now names another entry.
func (t *idTable[T]) remove(e T) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if id, _ := e.tableKey(); t.byID[id] == e {
		delete(t.byID, id)
	}
}
