// Package runmetrics holds the Prometheus series every scheduled lake command (reconcile, restore drills)
// keeps per table: its runs by result and when its last successful run ended, the two an alert on a
// command that fails or stops running reads.
package runmetrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Runs are a command's run series, labelled by the tables a run reads.
type Runs struct {
	// Total is connectd_<command>_runs_total{<labels>, result}.
	Total *prometheus.CounterVec
	// LastSuccess is connectd_<command>_last_success_timestamp_seconds{<labels>}, in Unix seconds.
	LastSuccess *prometheus.GaugeVec
}

// New makes the run series of command (e.g. reconcile: connectd_reconcile_runs_total) with their help
// texts, which say what the command's results and successes are.
func New(command string, labels []string, totalHelp, lastSuccessHelp string) Runs {
	return Runs{
		Total: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "connectd_" + command + "_runs_total",
			Help: totalHelp}, append(labels[:len(labels):len(labels)], "result")),
		LastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "connectd_" + command + "_last_success_timestamp_seconds",
			Help: lastSuccessHelp}, labels),
	}
}

// Collectors are the series, to register.
func (r Runs) Collectors() []prometheus.Collector {
	return []prometheus.Collector{r.Total, r.LastSuccess}
}

// Observe counts a run of the tables l with its result and, when it succeeded, records when it ended.
func (r Runs) Observe(l prometheus.Labels, result string, succeeded bool, ended time.Time) {
	if succeeded {
		r.LastSuccess.With(l).Set(float64(ended.Unix()))
	}
	withResult := prometheus.Labels{"result": result}
	for k, v := range l {
		withResult[k] = v
	}
	r.Total.With(withResult).Inc()
}

// Ended is when a run that started at start and took seconds ended.
func Ended(start time.Time, seconds float64) time.Time {
	return start.Add(time.Duration(seconds * float64(time.Second)))
}
