package index

// Abandon closes the index without waiting for scorch to persist, as a crash would.
func (x *Index) Abandon() error { return x.abandon() }
