package reconcile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/guide/guide/internal/events"
	"github.com/guide/guide/internal/guideyaml"
)

// configFile returns the configuration file to read, the name it is published under,
// and whether it was asked for explicitly (a missing explicit file is an error; a missing
// guide.yaml means the default).
func (x *Indexer) configFile() (file, source string, explicit bool) {
	if x.ConfigFile == "" {
		return filepath.Join(x.root, guideyaml.FileName), guideyaml.FileName, false
	}
	abs, err := filepath.Abs(x.ConfigFile)
	if err != nil {
		return x.ConfigFile, x.ConfigFile, true
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		if rel, ok := x.tree.Rel(real); ok {
			return abs, rel, true
		}
	}
	return abs, abs, true
}

// LoadConfig reads and validates the project configuration. It returns nil and no error
// when there is no guide.yaml (the default applies). A *guideyaml.Error names file and line.
func (x *Indexer) LoadConfig() (*guideyaml.Config, error) {
	if x.root == "" {
		if err := x.init(); err != nil {
			return nil, err
		}
	}
	file, source, explicit := x.configFile()
	var f *os.File
	var err error
	if explicit {
		f, err = os.Open(file) // named by the operator: it may live anywhere
	} else {
		f, err = x.tree.Open(guideyaml.FileName) // the root's: never a link out of it
	}
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		return nil, nil
	}
	if err != nil {
		return nil, &guideyaml.Error{File: source, Problem: err.Error()}
	}
	defer f.Close()
	// Read no more than the limit and a byte: a huge file is refused, not held.
	b, err := io.ReadAll(io.LimitReader(f, guideyaml.MaxFileBytes+1))
	if err != nil {
		return nil, &guideyaml.Error{File: source, Problem: err.Error()}
	}
	if len(b) > guideyaml.MaxFileBytes {
		size := int64(len(b))
		if st, err := f.Stat(); err == nil {
			size = st.Size()
		}
		return nil, guideyaml.TooLarge(source, size)
	}
	return guideyaml.Parse(source, b)
}

// reconcileConfig publishes the configuration when it differs from the stream's latest.
// An invalid file publishes nothing, so that the last good configuration stays in force.
func (x *Indexer) reconcileConfig(ctx context.Context, pub *events.Publisher, sum *Summary) error {
	cfg, err := x.LoadConfig()
	var body []byte
	if err == nil && cfg != nil {
		// The canonical form is what one event carries: it must fit, or the stream refuses
		// the event and, with it, every document published after it.
		if body = cfg.Canonical(); int64(len(body)) > x.maxSize {
			err = &guideyaml.Error{File: cfg.Source, Problem: fmt.Sprintf(
				"the configuration is %d bytes once encoded; one event carries at most %d bytes (the NATS server's max_payload less room for the envelope)",
				len(body), x.maxSize)}
		}
	}
	if err != nil {
		sum.Config, sum.ConfigError = "invalid", err.Error()
		if err.Error() != x.lastConfigErr {
			x.log.Error("configuration not applied; the last good one stays in force", "err", err)
		}
		x.lastConfigErr = err.Error()
		return nil
	}
	x.lastConfigErr = ""
	latest, found, err := x.Stream.LatestConfig(ctx, x.Project)
	if err != nil {
		return err
	}
	if cfg == nil {
		if !found || latest.Source == "" {
			sum.Config = "default"
			return nil
		}
		cfg = &guideyaml.Config{Categories: map[string]*guideyaml.Category{}, Collections: map[string]*guideyaml.Collection{}}
		body = cfg.Canonical()
	}
	if found && latest.Hash == events.HashContent(body) {
		sum.Config = "unchanged"
		return nil
	}
	e := &events.Event{Op: events.OpConfig, Project: x.Project, Config: body, Source: cfg.Source, PrevSeq: latest.Seq}
	if err := pub.Publish(ctx, e); err != nil {
		return err
	}
	sum.Config = "published"
	if cfg.Source == "" {
		sum.Config = "default"
		x.log.Info("configuration file removed; the default applies")
	} else {
		x.log.Info("configuration published", "file", cfg.Source)
	}
	return nil
}

// configPath is the configuration file's path relative to the root, as the watcher names
// it ("" when it lies outside the root).
func (x *Indexer) configPath() string {
	_, source, _ := x.configFile()
	if filepath.IsAbs(source) {
		return ""
	}
	return source
}
