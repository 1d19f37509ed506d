package reconcile

import (
	"context"
	"errors"
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
	if real, err := filepath.EvalSymlinks(abs); err == nil && within(x.root, real) && real != x.root {
		return abs, filepath.ToSlash(real[len(x.root)+1:]), true
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
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		return nil, nil
	}
	if err != nil {
		return nil, &guideyaml.Error{File: source, Problem: err.Error()}
	}
	return guideyaml.Parse(source, b)
}

// reconcileConfig publishes the configuration when it differs from the stream's latest.
// An invalid file publishes nothing, so that the last good configuration stays in force.
func (x *Indexer) reconcileConfig(ctx context.Context, pub *events.Publisher, sum *Summary) error {
	cfg, err := x.LoadConfig()
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
	}
	body := cfg.Canonical()
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
