package metrics

import (
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/connect"
)

// Plugins publishes plugins' collectors (connect.PluginMetrics) in Registry.
var Plugins connect.PluginMetrics = &pluginRegistry{reg: Registry}

type pluginRegistry struct {
	reg *prometheus.Registry

	mu         sync.Mutex
	registered []pluginCollector
}

// pluginCollector reads a connect.MetricCollector as a prometheus.Collector.
type pluginCollector struct {
	c     connect.MetricCollector
	descs map[*connect.MetricDesc]*prometheus.Desc
}

func (r *pluginRegistry) Register(c connect.MetricCollector) error {
	pc := pluginCollector{c: c, descs: map[*connect.MetricDesc]*prometheus.Desc{}}
	for _, d := range c.Describe() {
		pc.descs[d] = prometheus.NewDesc(d.Name, d.Help, d.Labels, nil)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.reg.Register(pc); err != nil {
		return err
	}
	r.registered = append(r.registered, pc)
	return nil
}

// Unregister withdraws c; c's dynamic type must be comparable (a pointer or a comparable struct).
func (r *pluginRegistry) Unregister(c connect.MetricCollector) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, pc := range r.registered {
		if pc.c == c {
			r.registered = append(r.registered[:i], r.registered[i+1:]...)
			return r.reg.Unregister(pc)
		}
	}
	return false
}

func (pc pluginCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range pc.descs {
		ch <- d
	}
}

func (pc pluginCollector) Collect(ch chan<- prometheus.Metric) {
	pc.c.Collect(func(d *connect.MetricDesc, v float64, labelValues ...string) {
		pd, ok := pc.descs[d]
		if !ok {
			ch <- prometheus.NewInvalidMetric(prometheus.NewDesc(d.Name, d.Help, d.Labels, nil),
				fmt.Errorf("metric %s is not among the collector's descriptions", d.Name))
			return
		}
		kind := prometheus.GaugeValue
		if d.Kind == connect.CounterMetric {
			kind = prometheus.CounterValue
		}
		m, err := prometheus.NewConstMetric(pd, kind, v, labelValues...)
		if err != nil {
			m = prometheus.NewInvalidMetric(pd, err)
		}
		ch <- m
	})
}
