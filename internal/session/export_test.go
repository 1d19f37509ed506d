package session

import "context"

// WatchEnded runs the registry's watch for sessions ended elsewhere alone, without Run's
// sweeps, which also notice ends.
func WatchEnded(r *Registry, ctx context.Context) { r.watchEnded(ctx) }
