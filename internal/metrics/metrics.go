// Package metrics exposes a query process's figures in the Prometheus format: how fresh
// its projections are, how long tool calls take and how they fail, plus the Go runtime's.
package metrics

import (
	"context"
	"net/http"
	"time"

	"github.com/guide/guide/internal/freshness"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics holds the collectors of one process. Build it with New.
type Metrics struct {
	Registry     *prometheus.Registry
	toolDuration *prometheus.HistogramVec
	toolErrors   *prometheus.CounterVec
}

// New registers the collectors; the projections' freshness is read from fresh once per
// scrape, and reported ready as /healthz is, with at most maxLag events unapplied.
func New(fresh *freshness.Tracker, maxLag uint64) *Metrics {
	m := &Metrics{Registry: prometheus.NewRegistry()}
	m.toolDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "guide_tool_call_duration_seconds",
		Help: "Time to answer a tool call, by tool.",
		// Calls are answered from memory: most take well under a millisecond.
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
	}, []string{"tool"})
	m.toolErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "guide_tool_errors_total",
		Help: "Tool calls that failed, by tool and error type (the error_type clients see; \"internal\" for a protocol-level error).",
	}, []string{"tool", "type"})
	m.Registry.MustRegister(m.toolDuration, m.toolErrors,
		&freshnessCollector{fresh: fresh, maxLag: maxLag},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// ObserveTool records one tool call; errType is "" for a success.
func (m *Metrics) ObserveTool(tool string, d time.Duration, errType string) {
	m.toolDuration.WithLabelValues(tool).Observe(d.Seconds())
	if errType != "" {
		m.toolErrors.WithLabelValues(tool, errType).Inc()
	}
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

var (
	descDocuments = prometheus.NewDesc("guide_documents", "Documents in the catalog.", nil, nil)
	descApplied   = prometheus.NewDesc("guide_applied_sequence", "Last stream sequence applied to the projections.", nil, nil)
	descStream    = prometheus.NewDesc("guide_stream_last_sequence", "Last sequence of the stream, as last seen.", nil, nil)
	descLag       = prometheus.NewDesc("guide_lag_events", "Events of the project on the stream not yet applied.", nil, nil)
	descReady     = prometheus.NewDesc("guide_ready", "1 when caught up with the stream (what /healthz reports), else 0.", nil, nil)
)

// freshnessCollector reads the projections once per scrape, so that the figures of one
// scrape come from one moment.
type freshnessCollector struct {
	fresh  *freshness.Tracker
	maxLag uint64
}

func (c *freshnessCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descDocuments, descApplied, descStream, descLag, descReady} {
		ch <- d
	}
}

func (c *freshnessCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	f := c.fresh.Health(ctx, c.maxLag)
	ready := 0.0
	if f.Ready {
		ready = 1
	}
	ch <- prometheus.MustNewConstMetric(descDocuments, prometheus.GaugeValue, float64(f.Documents))
	ch <- prometheus.MustNewConstMetric(descApplied, prometheus.GaugeValue, float64(f.AppliedSeq))
	ch <- prometheus.MustNewConstMetric(descStream, prometheus.GaugeValue, float64(f.StreamLastSeq))
	ch <- prometheus.MustNewConstMetric(descLag, prometheus.GaugeValue, float64(f.Lag))
	ch <- prometheus.MustNewConstMetric(descReady, prometheus.GaugeValue, ready)
}
