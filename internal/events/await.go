package events

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/guide/guide/internal/backoff"
)

// AwaitEvery is how often AwaitBind and AwaitProject look again.
var AwaitEvery = 500 * time.Millisecond

// ErrSeveralProjects: the stream holds more than one project, so none can be chosen.
var ErrSeveralProjects = errors.New("the stream holds several projects")

// AwaitBind binds to the stream (see Bind), waiting for it to exist: another process (the
// indexer) creates it. waiting, when set, hears the first failure, once.
func (s *Stream) AwaitBind(ctx context.Context, waiting func(error)) error {
	return await(ctx, func(first bool) (bool, error) {
		err := s.Bind(ctx)
		if err != nil && first && waiting != nil {
			waiting(err)
		}
		return err == nil, nil
	})
}

// AwaitProject returns the only project on the stream, waiting for one to appear. Several
// projects end it with ErrSeveralProjects. waiting, when set, is told once that there is
// none yet.
func (s *Stream) AwaitProject(ctx context.Context, waiting func()) (string, error) {
	var project string
	err := await(ctx, func(first bool) (bool, error) {
		ps, err := s.Projects(ctx)
		if err != nil {
			return false, err
		}
		switch len(ps) {
		case 0:
			if first && waiting != nil {
				waiting()
			}
			return false, nil
		case 1:
			project = ps[0]
			return true, nil
		}
		slices.Sort(ps)
		return false, fmt.Errorf("%w (%v)", ErrSeveralProjects, ps)
	})
	return project, err
}

// await calls try until it reports done or fails, every AwaitEvery, until ctx ends.
func await(ctx context.Context, try func(first bool) (done bool, err error)) error {
	poll := backoff.Backoff{Initial: AwaitEvery, Max: AwaitEvery}
	for first := true; ; first = false {
		if done, err := try(first); done || err != nil {
			return err
		}
		if err := poll.Wait(ctx); err != nil {
			return err
		}
	}
}
