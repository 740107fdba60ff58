package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
)

var testDesc = &connect.MetricDesc{Name: "connectd_test_buffered", Help: "Buffered records.", Kind: connect.GaugeMetric,
	Labels: []string{"connector"}}

// workerCollector is one worker's collector of a plugin: a value per connector.
type workerCollector struct{ values map[string]float64 }

func (c *workerCollector) Describe() []*connect.MetricDesc { return []*connect.MetricDesc{testDesc} }
func (c *workerCollector) Collect(report func(*connect.MetricDesc, float64, ...string)) {
	for conn, v := range c.values {
		report(testDesc, v, conn)
	}
}

func gatherSeries(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	fams, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			out[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
		}
	}
	return out
}

// TestPluginCollectorsOfWorkers: a plugin's collectors on two workers of one process both register; a
// scrape reports each connector once (a connector both report as the first registered reports it); the
// series of the other stay when one is withdrawn.
func TestPluginCollectorsOfWorkers(t *testing.T) {
	reg := prometheus.NewRegistry()
	plugins := &pluginRegistry{reg: reg}
	w1 := &workerCollector{values: map[string]float64{"a": 1, "both": 10}}
	w2 := &workerCollector{values: map[string]float64{"b": 2, "both": 20}}
	require.NoError(t, plugins.Register(w1))
	require.NoError(t, plugins.Register(w2), "the same plugin on a second worker")
	require.Equal(t, map[string]float64{"a": 1, "b": 2, "both": 10}, gatherSeries(t, reg))

	require.True(t, plugins.Unregister(w1))
	require.False(t, plugins.Unregister(w1))
	require.Equal(t, map[string]float64{"b": 2, "both": 20}, gatherSeries(t, reg))
	require.True(t, plugins.Unregister(w2))
	require.Empty(t, gatherSeries(t, reg))

	require.NoError(t, plugins.Register(w2), "registers again once withdrawn")
	require.Equal(t, map[string]float64{"b": 2, "both": 20}, gatherSeries(t, reg))
}

// otherCollector describes testDesc's family differently.
type otherCollector struct{ desc *connect.MetricDesc }

func (c otherCollector) Describe() []*connect.MetricDesc                     { return []*connect.MetricDesc{c.desc} }
func (otherCollector) Collect(func(*connect.MetricDesc, float64, ...string)) {}

// TestPluginCollectorConflicts: a collector that describes a published family otherwise, or only part of a
// published set of families, is refused.
func TestPluginCollectorConflicts(t *testing.T) {
	plugins := &pluginRegistry{reg: prometheus.NewRegistry()}
	require.NoError(t, plugins.Register(&workerCollector{}))
	relabelled := *testDesc
	relabelled.Labels = []string{"connector", "task"}
	require.Error(t, plugins.Register(otherCollector{&relabelled}))
	extra := &connect.MetricDesc{Name: "connectd_test_other", Help: "Other.", Kind: connect.CounterMetric}
	require.Error(t, plugins.Register(twoFamilies{testDesc, extra}))
}

// twoFamilies describes two families.
type twoFamilies [2]*connect.MetricDesc

func (c twoFamilies) Describe() []*connect.MetricDesc                     { return c[:] }
func (twoFamilies) Collect(func(*connect.MetricDesc, float64, ...string)) {}
