package events

import (
	"context"
	"time"
)

// DeliveryAhead starts a delivery of project's events as Follow does for batches of
// maxBatch events, and returns how many messages its channel holds ahead of the batch
// being cut.
func DeliveryAhead(ctx context.Context, s *Stream, project string, maxBatch int) (int, error) {
	ch, stop, err := s.deliver(ctx, project, 0, maxBatch)
	if err != nil {
		return 0, err
	}
	defer stop()
	return cap(ch), nil
}

// Gather is gather, for its table test.
func Gather(b Batch, streaming bool, began time.Time) time.Duration {
	return gather(b, streaming, began)
}

// GatherGap and BurstWindow are the burst's settings.
const (
	GatherGap   = gatherGap
	BurstWindow = burstWindow
)
