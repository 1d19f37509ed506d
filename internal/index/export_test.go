package index

// Abandon closes the index without waiting for scorch to persist, as a crash would.
func (x *Index) Abandon() error { return x.abandon() }

// Persisted is the checkpoint of the last batch scorch wrote to disk.
func (x *Index) Persisted() uint64 { return x.disk.seq.Load() }
