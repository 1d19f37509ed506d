package events

import "context"

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
