package sandbox

import "sync"

// keyedMutex serialises work per key (a sandbox id or name) while different
// keys proceed in parallel. Entries are dropped when nobody holds or waits.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*keyedEntry
}

type keyedEntry struct {
	mu   sync.Mutex
	refs int
}

// Lock locks key and returns the function that unlocks it.
func (k *keyedMutex) Lock(key string) (unlock func()) {
	k.mu.Lock()
	e := k.entry(key)
	e.refs++
	k.mu.Unlock()

	e.mu.Lock()
	return k.unlocker(key, e)
}

// TryLock locks key if nobody holds it, and returns the function that
// unlocks it; ok is false if somebody does.
func (k *keyedMutex) TryLock(key string) (unlock func(), ok bool) {
	k.mu.Lock()
	e := k.entry(key)
	if !e.mu.TryLock() { // held: a fresh entry's never is
		k.mu.Unlock()
		return nil, false
	}
	e.refs++
	k.mu.Unlock()
	return k.unlocker(key, e), true
}

// entry returns key's entry, made if need be; k.mu must be held.
func (k *keyedMutex) entry(key string) *keyedEntry {
	if k.locks == nil {
		k.locks = make(map[string]*keyedEntry)
	}
	e := k.locks[key]
	if e == nil {
		e = &keyedEntry{}
		k.locks[key] = e
	}
	return e
}

func (k *keyedMutex) unlocker(key string, e *keyedEntry) func() {
	return func() {
		e.mu.Unlock()
		k.mu.Lock()
		e.refs--
		if e.refs == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}
