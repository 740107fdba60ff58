package metrics

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/connect"
)

// Plugins publishes plugins' collectors (connect.PluginMetrics) in Registry. A plugin registers a collector
// per worker, so collectors that describe the same families (one plugin on several workers of the process)
// are published as one group: a series several of them report is published once, as the first registered
// reports it, and a scrape never fails on a duplicate.
var Plugins connect.PluginMetrics = &pluginRegistry{reg: Registry}

type pluginRegistry struct {
	reg *prometheus.Registry

	mu     sync.Mutex
	groups []*pluginGroup
}

// pluginGroup reads the plugin collectors that describe one set of families as one prometheus.Collector.
type pluginGroup struct {
	specs map[string]connect.MetricDesc // the families, by name
	descs map[string]*prometheus.Desc

	mu      sync.Mutex
	members []connect.MetricCollector // in the order they registered
}

func (r *pluginRegistry) Register(c connect.MetricCollector) error {
	specs := map[string]connect.MetricDesc{}
	for _, d := range c.Describe() {
		if _, dup := specs[d.Name]; dup {
			return fmt.Errorf("metric %s is described twice", d.Name)
		}
		specs[d.Name] = *d
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, g := range r.groups {
		if g.describes(specs) {
			g.mu.Lock()
			g.members = append(g.members, c)
			g.mu.Unlock()
			return nil
		}
	}
	g := &pluginGroup{specs: specs, descs: map[string]*prometheus.Desc{}, members: []connect.MetricCollector{c}}
	for name, d := range specs {
		g.descs[name] = prometheus.NewDesc(d.Name, d.Help, d.Labels, nil)
	}
	if err := r.reg.Register(g); err != nil {
		return err
	}
	r.groups = append(r.groups, g)
	return nil
}

// Unregister withdraws c; c's dynamic type must be comparable (a pointer or a comparable struct).
func (r *pluginRegistry) Unregister(c connect.MetricCollector) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, g := range r.groups {
		g.mu.Lock()
		j := slices.IndexFunc(g.members, func(m connect.MetricCollector) bool { return m == c })
		if j >= 0 {
			g.members = slices.Delete(g.members, j, j+1)
		}
		empty := len(g.members) == 0
		g.mu.Unlock()
		if j < 0 {
			continue
		}
		if empty {
			r.groups = slices.Delete(r.groups, i, i+1)
			r.reg.Unregister(g)
		}
		return true
	}
	return false
}

// describes reports whether specs are exactly the group's families.
func (g *pluginGroup) describes(specs map[string]connect.MetricDesc) bool {
	if len(specs) != len(g.specs) {
		return false
	}
	for name, d := range specs {
		if gd, ok := g.specs[name]; !ok || !sameDesc(&gd, &d) {
			return false
		}
	}
	return true
}

func sameDesc(a, b *connect.MetricDesc) bool {
	return a.Name == b.Name && a.Help == b.Help && a.Kind == b.Kind && slices.Equal(a.Labels, b.Labels)
}

func (g *pluginGroup) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range g.descs {
		ch <- d
	}
}

func (g *pluginGroup) Collect(ch chan<- prometheus.Metric) {
	g.mu.Lock()
	members := slices.Clone(g.members)
	g.mu.Unlock()
	var seen map[string]bool // series reported so far, when several members may report one
	if len(members) > 1 {
		seen = map[string]bool{}
	}
	for _, c := range members {
		c.Collect(func(d *connect.MetricDesc, v float64, labelValues ...string) {
			spec, ok := g.specs[d.Name]
			if !ok || !sameDesc(&spec, d) {
				ch <- prometheus.NewInvalidMetric(prometheus.NewDesc(d.Name, d.Help, d.Labels, nil),
					fmt.Errorf("metric %s is not among the collector's descriptions", d.Name))
				return
			}
			if seen != nil {
				key := d.Name + "\x00" + strings.Join(labelValues, "\x00")
				if seen[key] {
					return
				}
				seen[key] = true
			}
			pd := g.descs[d.Name]
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
}
