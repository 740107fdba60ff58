package iceberg

import "github.com/connectd/connectd/connectors/iceberg/scd"

// SCDRunsT is how many SCD runs of the SCD table target the task's coordinator finished, how many
// failed, and the last one's report and error.
func SCDRunsT(task *Task, target string) (runs, failures int64, last scd.Report, err string) {
	if task.coord.scd == nil {
		return 0, 0, scd.Report{}, ""
	}
	r := task.coord.scd.runs()[target]
	return r.Runs, r.Failures, r.Report, r.Err
}
