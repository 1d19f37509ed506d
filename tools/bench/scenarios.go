package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/guide/guide/tools/report"
)

// runScenarios runs the scenarios that pick their own corpus: search and get_content on the
// SearchDocs corpus (search also on GOROOT), the web page, indexer --once and several
// clients of one owner on the same,
// the split-mode freshness and churn scenarios on a copy of the FreshDocs corpus, and,
// when named, the scale scenario on corpora of ScaleSizes.
func runScenarios(ctx context.Context, cfg Config, res *report.Result, bin, fsScript string, goroot *report.Corpus) error {
	if cfg.has(ScenarioSearch, ScenarioContent, ScenarioWeb, ScenarioOnce, ScenarioClients) {
		big, err := generated(cfg.Dir, cfg.SearchDocs, cfg.Seed, cfg.logf)
		if err != nil {
			return fmt.Errorf("corpus of %d: %w", cfg.SearchDocs, err)
		}
		data := filepath.Join(cfg.Dir, "data", "big")
		logFile, err := os.Create(filepath.Join(cfg.Dir, "logs", "big-guide.log"))
		if err != nil {
			return err
		}
		defer logFile.Close()
		_ = os.RemoveAll(data)
		var s *server
		if cfg.has(ScenarioSearch) {
			cfg.logf("search on %s: index from empty, then %d words × %d searches beside rg", big.Name, 30, cfg.SearchReps)
			sr, srv := measureSearch(ctx, cfg, bin, big, data, logFile, cfg.has(ScenarioContent))
			res.Search = append(res.Search, sr)
			s = srv
		}
		if cfg.has(ScenarioContent) {
			cfg.logf("content on %s: get_content of 10 documents, %d calls, beside the reference server", big.Name, cfg.ContentCalls)
			if s == nil {
				_ = os.RemoveAll(data)
				settle()
				s, _, _, _, err = spawnIndexed(ctx, bin, big, data, logFile)
				if err != nil {
					res.Content = &report.ContentResult{Corpus: big, Err: err.Error()}
				}
			}
			if s != nil {
				fsLog, err := os.Create(filepath.Join(cfg.Dir, "logs", "big-fs.log"))
				if err != nil {
					return err
				}
				cr := measureContent(ctx, cfg, s, fsScript, big, fsLog)
				fsLog.Close()
				res.Content = &cr
			}
		}
		if s != nil {
			s.stop() // a clean stop, so that indexer --once can open the same store
		}
		if cfg.has(ScenarioWeb) {
			cfg.logf("web on %s: %d requests of each kind of page", big.Name, cfg.WebCalls)
			wr := measureWeb(ctx, cfg, bin, big, data, logFile)
			res.Web = &wr
		}
		if cfg.has(ScenarioOnce) {
			natsDir := filepath.Join(data, "nats")
			store := "the JetStream store guide-mcp --root filled in the search scenario (embedded, opened by indexer --once --data)"
			if _, err := os.Stat(natsDir); err != nil {
				natsDir = filepath.Join(cfg.Dir, "data", "once", "nats")
				_ = os.RemoveAll(natsDir)
				store = "its own embedded JetStream store (--data), filled by a first indexer --once"
			}
			cfg.logf("once on %s: indexer --once with nothing changed, %d runs", big.Name, cfg.OnceRuns)
			or := measureOnce(ctx, cfg, bin, big, natsDir, store, logFile)
			res.Once = &or
		}
		if cfg.has(ScenarioClients) {
			cfg.logf("clients on %s: a second client %d times, 1 and 5 clients' memory, the owner killed %d times with %d clients attached",
				big.Name, cfg.ClientRuns, cfg.ClientRuns, attachedClients)
			cr := measureClients(ctx, cfg, bin, big, data, logFile)
			res.Clients = &cr
		}
		_ = os.RemoveAll(data)
		_ = os.RemoveAll(filepath.Join(cfg.Dir, "data", "once"))
	}
	if cfg.has(ScenarioSearch) && goroot != nil {
		cfg.logf("search on %s", goroot.Name)
		logFile, err := os.Create(filepath.Join(cfg.Dir, "logs", "goroot-guide.log"))
		if err != nil {
			return err
		}
		data := filepath.Join(cfg.Dir, "data", "goroot")
		sr, _ := measureSearch(ctx, cfg, bin, goroot, data, logFile, false)
		logFile.Close()
		res.Search = append(res.Search, sr)
		_ = os.RemoveAll(data)
	}
	if cfg.has(ScenarioFresh, ScenarioChurn) {
		src, err := generated(cfg.Dir, cfg.FreshDocs, cfg.Seed, cfg.logf)
		if err != nil {
			return fmt.Errorf("corpus of %d: %w", cfg.FreshDocs, err)
		}
		// These scenarios write into the tree: they get a copy, never the stored corpus.
		dir, err := filepath.Abs(filepath.Join(cfg.Dir, "work", filepath.Base(src.Root)))
		if err != nil {
			return err
		}
		cfg.logf("split mode on a copy of %s in %s", src.Name, dir)
		if err := copyTree(src.Root, dir); err != nil {
			return err
		}
		c := &report.Corpus{Name: src.Name + " (a copy)", Root: dir, Generated: true}
		if err := listTree(c); err != nil {
			return err
		}
		data := filepath.Join(cfg.Dir, "data", "split")
		_ = os.RemoveAll(data)
		logFile, err := os.Create(filepath.Join(cfg.Dir, "logs", "split.log"))
		if err != nil {
			return err
		}
		defer logFile.Close()
		settle()
		sp, err := startSplit(ctx, bin, c.Root, data, logFile)
		if err != nil {
			res.SplitErr = err.Error()
		} else {
			cfg.logf("  split mode indexed %d documents in %s", sp.Status.Documents, report.FormatDuration(sp.Setup))
			if cfg.has(ScenarioFresh) {
				cfg.logf("  fresh: %d saves, then %d indexer --once baselines", cfg.FreshSamples, cfg.Rescans)
				fr := measureFresh(ctx, bin, sp, c, cfg.FreshSamples, cfg.Rescans, cfg.Seed, logFile)
				res.Fresh = &fr
			}
			if cfg.has(ScenarioChurn) {
				cfg.logf("  churn: %d writes/s for %s", cfg.ChurnRate, cfg.ChurnFor)
				ch := measureChurn(ctx, sp, c, cfg.ChurnRate, cfg.ChurnFor)
				res.Churn = &ch
			}
			sp.close()
		}
		_ = os.RemoveAll(data)
		_ = os.RemoveAll(dir)
	}
	if cfg.has(ScenarioReplica) {
		cfg.logf("replica: go %s", strings.Join(replicaBench, " "))
		rr := measureReplica(ctx)
		res.Replica = &rr
	}
	if cfg.has(ScenarioRYW) {
		logFile, err := os.Create(filepath.Join(cfg.Dir, "logs", "ryw.log"))
		if err != nil {
			return err
		}
		defer logFile.Close()
		cfg.logf("ryw on a copy of the generated %d corpus", cfg.RYWDocs)
		rr := measureRYW(ctx, cfg, bin, logFile)
		res.RYW = &rr
	}
	if cfg.has(ScenarioChanges) {
		cfg.logf("changes: go %s", strings.Join(changesBench, " "))
		cr := measureChanges(ctx)
		res.Changes = &cr
	}
	if cfg.has(ScenarioScale) {
		logFile, err := os.Create(filepath.Join(cfg.Dir, "logs", "scale.log"))
		if err != nil {
			return err
		}
		defer logFile.Close()
		sr := measureScale(ctx, cfg, bin, logFile)
		res.Scale = &sr
	}
	if cfg.has(ScenarioPartitions) {
		logFile, err := os.Create(filepath.Join(cfg.Dir, "logs", "partitions.log"))
		if err != nil {
			return err
		}
		defer logFile.Close()
		pr := measurePartitions(ctx, cfg, bin, logFile)
		res.Partitions = &pr
	}
	return nil
}
