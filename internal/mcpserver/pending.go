package mcpserver

import (
	"context"

	"github.com/guide/guide/internal/query"
)

// Pending reads what is on its way to the projections for a session: the events not yet
// applied by every projection, and the session's uploads in flight. The web page shows
// its documents' statuses from it, as list does.
func (s *Server) Pending(ctx context.Context, sessionID string) query.Pending {
	return s.pending(ctx, sessionID)
}
